/**
 * pdf-lib's standard fonts encode text as WinAnsi (Windows-1252) and throw on anything else, so
 * user text (company names, descriptions) is made encodable first: Latin-1 and the Windows-1252
 * extras pass, common look-alikes are mapped, everything else becomes "?".
 */
const WINDOWS_1252_EXTRAS = new Set("€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ");
const LOOK_ALIKES: Record<string, string> = { "\u2010": "-", "\u2011": "-", "\u2212": "-", "\u2192": "->", "\u2264": "<=", "\u2265": ">=" };

/** The text with every character WinAnsi cannot encode replaced; tabs and line breaks become spaces. */
export function toWinAnsi(text: string): string {
  let result = "";
  for (const char of text.normalize("NFC")) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\t" || char === "\n" || char === "\r") result += " ";
    else if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WINDOWS_1252_EXTRAS.has(char)) result += char;
    else result += LOOK_ALIKES[char] ?? "?";
  }
  return result;
}
