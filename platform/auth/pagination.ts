/**
 * The Link header auth-js paginates with, built as GoTrue builds it: the request path and query with
 * `page` replaced, keys sorted (so `page` comes first and auth-js can read it), next only when
 * there is a next page, last always.
 */
export function paginationLink(requestUrl: URL, page: number, perPage: number, total: number): string {
  const totalPages = Math.ceil(total / perPage);
  const withPage = (value: number) => {
    const query = new URLSearchParams(requestUrl.search);
    query.set("page", String(value));
    query.sort();
    return `<${requestUrl.pathname}?${query.toString()}>`;
  };
  const links: string[] = [];
  if (totalPages > page) links.push(`${withPage(page + 1)}; rel="next"`);
  links.push(`${withPage(totalPages)}; rel="last"`);
  return links.join(", ");
}
