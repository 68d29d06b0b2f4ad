import { PDFArray, PDFDict, PDFDocument, PDFName, PDFString, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { A4_SIZE, renderProposalPdf, wrapText } from "./proposal-pdf.ts";
import { sampleProposal } from "../../../../test/helpers/portal/sample-proposal.ts";

describe("renderProposalPdf", () => {
  it("makes a one-page A4 PDF with the proposal's metadata", async () => {
    const bytes = await renderProposalPdf(sampleProposal, "http://127.0.0.1:54321/functions/v1/approve-proposal?token=seed-token");
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-");
    const pdf = await PDFDocument.load(bytes);
    expect(pdf.getPageCount()).toBe(1);
    const [width, height] = [pdf.getPage(0).getWidth(), pdf.getPage(0).getHeight()];
    expect([width, height]).toEqual(A4_SIZE);
    expect(pdf.getTitle()).toBe("Proposta PROP-202611-001");
    expect(pdf.getAuthor()).toBe("Orbita");
  });

  it("survives text the standard fonts cannot encode and very long descriptions", async () => {
    const long = { ...sampleProposal, products: { name: "Plano → Ω", description: "palavra ".repeat(2000) } };
    const pdf = await PDFDocument.load(await renderProposalPdf(long, `https://portal.example.com/aprovar?token=${"x".repeat(300)}`));
    expect(pdf.getPageCount()).toBeGreaterThan(1);
  });
});

/** The URIs the first page's link annotations open. */
async function linkTargets(bytes: Uint8Array): Promise<string[]> {
  const page = (await PDFDocument.load(bytes)).getPage(0);
  const annotations = page.node.lookupMaybe(PDFName.of("Annots"), PDFArray);
  return (annotations?.asArray() ?? []).map((reference) => {
    const action = page.doc.context.lookup(reference, PDFDict).lookup(PDFName.of("A"), PDFDict);
    return action.lookup(PDFName.of("URI"), PDFString).decodeText();
  });
}

describe("the approval link in the PDF", () => {
  const link = "http://127.0.0.1:54321/functions/v1/approve-proposal?token=seed-token";

  it("is clickable in the customer's copy", async () => {
    expect(await linkTargets(await renderProposalPdf(sampleProposal, link))).toEqual([link]);
  });
  it("is absent from the copy without a link (what a signed-in user downloads)", async () => {
    const bytes = await renderProposalPdf(sampleProposal, null);
    expect(await linkTargets(bytes)).toEqual([]);
    expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1);
  });
});

describe("wrapText", () => {
  it("wraps at spaces and cuts words longer than a line", async () => {
    const font = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
    const lines = wrapText(`curto ${"a".repeat(200)} fim`, font, 10, 100);
    expect(lines[0]).toBe("curto");
    expect(lines.every((line) => font.widthOfTextAtSize(line, 10) <= 100)).toBe(true);
    expect(lines.join("").replace(/ /g, "")).toBe(`curto${"a".repeat(200)}fim`);
  });
});
