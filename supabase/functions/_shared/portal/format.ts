/** Presentation of stored values in Brazilian Portuguese, shared by the PDF, the e-mail and the approval page. */

const brl = new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" });
const day = new Intl.DateTimeFormat("pt-BR", { timeZone: "America/Sao_Paulo", day: "2-digit", month: "2-digit", year: "numeric" });

/**
 * A money amount as Brazilians write it, e.g. 1798.8 → "R$ 1.798,80". Intl puts a no-break space
 * after "R$"; it is replaced by a plain space so the text reads the same in every medium.
 */
export function formatBRL(value: number): string {
  return brl.format(value).replace(/\u00a0/g, " ");
}

/** A stored (normalised) CNPJ with its mask: "12ABC34501DE35" → "12.ABC.345/01DE-35". */
export function formatCnpj(cnpj: string): string {
  const match = /^([0-9A-Z]{2})([0-9A-Z]{3})([0-9A-Z]{3})([0-9A-Z]{4})([0-9]{2})$/.exec(cnpj);
  return match ? `${match[1]}.${match[2]}.${match[3]}/${match[4]}-${match[5]}` : cnpj;
}

/** A stored phone (area code + number digits) as "(11) 98765-4321" or "(11) 3344-5566". */
export function formatPhone(phone: string): string {
  const match = /^(\d{2})(\d{4,5})(\d{4})$/.exec(phone);
  return match ? `(${match[1]}) ${match[2]}-${match[3]}` : phone;
}

/** An instant as a São Paulo calendar date, "dd/mm/aaaa". */
export function formatDate(instant: string | Date): string {
  return day.format(typeof instant === "string" ? new Date(instant) : instant);
}

/** "1 mês" / "12 meses". */
export function formatMonths(months: number): string {
  return months === 1 ? "1 mês" : `${months} meses`;
}
