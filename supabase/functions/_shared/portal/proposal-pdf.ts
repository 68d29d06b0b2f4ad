import { PDFDocument, PDFName, PDFString, StandardFonts, rgb, type PDFFont, type PDFPage } from "pdf-lib";
import { formatBRL, formatCnpj, formatDate, formatMonths, formatPhone } from "./format.ts";
import type { ProposalDocument } from "./proposal-document.ts";
import { toWinAnsi } from "./winansi.ts";

/** A4 in PDF points (pdf-lib's default page is US Letter). */
export const A4_SIZE: [number, number] = [595.28, 841.89];
const MARGIN = 56;
const TEXT_WIDTH = A4_SIZE[0] - 2 * MARGIN;
const INK = rgb(0.12, 0.14, 0.18);
const MUTED = rgb(0.4, 0.43, 0.48);
const ACCENT = rgb(0.05, 0.33, 0.6);

/** Splits text into lines that fit a width; words longer than a line (URLs) are cut anywhere. */
export function wrapText(text: string, font: PDFFont, size: number, maxWidth: number): string[] {
  const fits = (value: string) => font.widthOfTextAtSize(value, size) <= maxWidth;
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = line ? `${line} ${word}` : word;
    if (fits(candidate)) {
      line = candidate;
      continue;
    }
    if (line) lines.push(line);
    line = word;
    while (!fits(line)) {
      let cut = line.length - 1;
      while (cut > 1 && !fits(line.slice(0, cut))) cut -= 1;
      lines.push(line.slice(0, cut));
      line = line.slice(cut);
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** Writes top to bottom, starting a new page when the current one is full. */
class PageWriter {
  private page: PDFPage;
  private y: number;

  constructor(private readonly pdf: PDFDocument, private readonly regular: PDFFont, private readonly bold: PDFFont) {
    this.page = pdf.addPage(A4_SIZE);
    this.y = A4_SIZE[1] - MARGIN;
  }

  /** Draws wrapped text and returns the lines' bounding rectangles (for link annotations). */
  text(value: string, options: { size?: number; bold?: boolean; color?: ReturnType<typeof rgb>; gapAfter?: number } = {}): [number, number, number, number][] {
    const size = options.size ?? 11;
    const font = options.bold ? this.bold : this.regular;
    const boxes: [number, number, number, number][] = [];
    for (const line of wrapText(toWinAnsi(value), font, size, TEXT_WIDTH)) {
      if (this.y - size < MARGIN) {
        this.page = this.pdf.addPage(A4_SIZE);
        this.y = A4_SIZE[1] - MARGIN;
      }
      this.y -= size;
      this.page.drawText(line, { x: MARGIN, y: this.y, size, font, color: options.color ?? INK });
      boxes.push([MARGIN, this.y - 2, MARGIN + font.widthOfTextAtSize(line, size), this.y + size]);
      this.y -= size * 0.45;
    }
    this.y -= options.gapAfter ?? 0;
    return boxes;
  }

  /** A section heading with a rule under it. */
  heading(value: string): void {
    this.y -= 10;
    this.text(value, { size: 13, bold: true, color: ACCENT });
    this.page.drawLine({ start: { x: MARGIN, y: this.y }, end: { x: MARGIN + TEXT_WIDTH, y: this.y }, thickness: 0.6, color: ACCENT });
    this.y -= 8;
  }

  /** "Label: value" on one line (wrapped when long). */
  field(label: string, value: string): void {
    this.text(`${label}: ${value}`);
  }

  /** Makes the given rectangles open a URL when clicked. */
  link(boxes: [number, number, number, number][], url: string): void {
    for (const rect of boxes) {
      const annotation = this.pdf.context.obj({
        Type: "Annot",
        Subtype: "Link",
        Rect: rect,
        Border: [0, 0, 0],
        A: { Type: "Action", S: "URI", URI: PDFString.of(url) },
      });
      this.page.node.addAnnot(this.pdf.context.register(annotation));
    }
  }
}

/**
 * The proposal as an A4 PDF in Portuguese: customer, product, values in BRL, contract length,
 * technician, and how to answer. The customer's copy (`approvalUrl` given, attached to the e-mail
 * sent to them) carries the approval link, clickable; the copy a signed-in user downloads
 * (`approvalUrl` null) only says the link goes to the customer's e-mail, because whoever holds the
 * link and knows that address can answer for the customer. Standard Helvetica keeps the file
 * small; text is passed through toWinAnsi because those fonts cannot encode everything users type.
 */
export async function renderProposalPdf(proposal: ProposalDocument, approvalUrl: string | null, issuedAt = new Date()): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(`Proposta ${proposal.code}`);
  pdf.setSubject(`Proposta comercial para ${toWinAnsi(proposal.customers.company_name)}`);
  pdf.setAuthor("Orbita");
  pdf.setCreator("Orbita – portal de propostas");
  pdf.setLanguage("pt-BR");
  pdf.catalog.set(PDFName.of("Lang"), PDFString.of("pt-BR"));
  const writer = new PageWriter(pdf, await pdf.embedFont(StandardFonts.Helvetica), await pdf.embedFont(StandardFonts.HelveticaBold));

  writer.text("Orbita", { size: 10, bold: true, color: MUTED });
  writer.text("Proposta comercial", { size: 22, bold: true, gapAfter: 2 });
  writer.text(proposal.code, { size: 13, bold: true, color: ACCENT });
  writer.text(`Emitida em ${formatDate(issuedAt)} · link de aprovação válido até ${formatDate(proposal.approval_token_expires_at)}`, { size: 9, color: MUTED });

  writer.heading("Cliente");
  writer.field("Razão social", proposal.customers.company_name);
  writer.field("CNPJ", formatCnpj(proposal.customers.cnpj));
  writer.field("Contato", proposal.customers.contact_name);
  writer.field("E-mail", proposal.customers.email);
  writer.field("Telefone", formatPhone(proposal.customers.phone));

  writer.heading("Produto");
  writer.text(proposal.products.name, { bold: true });
  if (proposal.products.description) writer.text(proposal.products.description, { size: 10, color: MUTED });

  writer.heading("Valores");
  writer.field("Valor mensal", formatBRL(proposal.monthly_value));
  writer.field("Prazo do contrato", formatMonths(proposal.contract_months));
  writer.text(`Valor total: ${formatBRL(proposal.total_value)}`, { bold: true });

  writer.heading("Técnico responsável");
  writer.text(proposal.profiles.full_name || "—");
  if (proposal.profiles.email) writer.text(proposal.profiles.email, { size: 10, color: MUTED });

  writer.heading("Aprovação");
  if (approvalUrl) {
    writer.text("Para aprovar ou recusar esta proposta, abra o link abaixo e confirme o e-mail do cliente:", { size: 10 });
    writer.link(writer.text(approvalUrl, { size: 9, color: ACCENT }), approvalUrl);
  } else {
    writer.text(`O link para aprovar ou recusar esta proposta é enviado somente ao e-mail do cliente: ${proposal.customers.email}.`, { size: 10 });
  }

  return await pdf.save();
}
