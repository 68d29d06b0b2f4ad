/**
 * References inside code (a Function's `code`, a Condition's expressions). The code is rewritten
 * once, when the workflow is compiled, so that every reference becomes `__refs[i]`: a value the
 * sandbox receives as data. Values therefore never become source text: a string holding
 * `"); while(1);//` stays a string.
 *
 * Where a reference sits decides what it means, so the code is read with a small JavaScript lexer:
 *  - in code, a reference is a value (`<api.items>.length` is a number);
 *  - inside a string literal (`'…'`, `"…"`) or a template literal's text, it is text, written in as
 *    templates elsewhere write values (strings as they are, everything else as JSON): the literal
 *    `'Bearer {{TOKEN}}'` becomes `('Bearer ' + __refs[0] + '')` and `` `Hi <api.name>` `` becomes
 *    `` `Hi ${__refs[0]}` ``, the value still passed as data. A quoted object key becomes a
 *    computed key (`{['k' + __refs[0] + '']: 1}`);
 *  - in comments and regular expression literals, it is left as written and never resolved.
 */
import { parseTemplate, type Token } from "./references.ts";

/** One reference in code: `asText` when it sits inside a string or template literal. */
export interface CodeSlot {
  token: Token;
  asText: boolean;
}

/** Code with its references replaced by `__refs[i]`, and what each slot stands for. */
export interface CompiledCode {
  source: string;
  slots: CodeSlot[];
}

/** Words after which a `/` starts a regular expression rather than a division. */
const KEYWORDS_BEFORE_EXPRESSION = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);

const WORD_CHAR = /[A-Za-z0-9_$]/;

type Mode = "code" | "string" | "template" | "line-comment" | "block-comment" | "regex";

/** The lexer: walks the code once, text and references in order, and writes the rewritten source. */
class CodeRewriter {
  /** The source written so far, in chunks: a literal's opening and closing quotes start and end one. */
  private readonly out: string[] = [""];
  readonly slots: CodeSlot[] = [];
  private mode: Mode = "code";
  /**
   * Template literals being read: `template` while in a literal's text (with the brace depth of the
   * code around it), `substitution` while in its `${…}`.
   */
  private readonly nesting: { kind: "template" | "substitution"; braces: number }[] = [];
  /** Braces open in the current code (since the innermost `${`). */
  private braces = 0;
  /** Whether the last significant thing in code was a value (so `/` divides) or an operator (a regex may start). */
  private afterValue = false;
  /** The last significant character in code (for spotting quoted object keys). */
  private lastChar = "";
  private word = "";
  private quote = "";
  private escaped = false;
  private regexClass = false;
  /** The string literal being read: where its opening quote was written, and whether it held a reference. */
  private literal: { open: number; keyCandidate: boolean; hasSlot: boolean } | null = null;
  /** A closed literal that held a reference, waiting for the next significant character to choose `( )` or `[ ]`. */
  private pendingWrap: { open: number; close: number; keyCandidate: boolean } | null = null;

  /** Reads a piece of text between references. */
  text(text: string): void {
    for (let index = 0; index < text.length; index++) {
      const char = text[index];
      const next = index + 1 < text.length ? text[index + 1] : "";
      switch (this.mode) {
        case "code":
          index += this.codeChar(char, next);
          break;
        case "string":
          this.emit(char);
          if (this.escaped) this.escaped = false;
          else if (char === "\\") this.escaped = true;
          else if (char === this.quote || char === "\n") this.closeString();
          break;
        case "template":
          this.emit(char);
          if (this.escaped) this.escaped = false;
          else if (char === "\\") this.escaped = true;
          else if (char === "`") {
            this.braces = (this.nesting.pop() as { braces: number }).braces;
            this.mode = "code";
            this.afterValue = true;
            this.lastChar = "`";
          } else if (char === "$" && next === "{") {
            this.emit("{");
            index++;
            this.nesting.push({ kind: "substitution", braces: 0 });
            this.braces = 0;
            this.mode = "code";
            this.afterValue = false;
            this.lastChar = "{";
          }
          break;
        case "line-comment":
          this.emit(char);
          if (char === "\n") this.mode = "code";
          break;
        case "block-comment":
          this.emit(char);
          if (char === "*" && next === "/") {
            this.emit("/");
            index++;
            this.mode = "code";
          }
          break;
        case "regex":
          this.emit(char);
          if (this.escaped) this.escaped = false;
          else if (char === "\\") this.escaped = true;
          else if (char === "[") this.regexClass = true;
          else if (char === "]") this.regexClass = false;
          else if ((char === "/" && !this.regexClass) || char === "\n") {
            // The flags that follow read as a word, and a regex is a value.
            this.mode = "code";
            this.afterValue = true;
            this.lastChar = "/";
          }
          break;
      }
    }
  }

  /** Reads a reference. */
  token(token: Token): void {
    switch (this.mode) {
      case "code": {
        const joinsWord = this.word !== "";
        this.endWord();
        this.decideWrap("");
        // `return<a.b>` must not become the identifier `return__refs`.
        this.emit(`${joinsWord ? " " : ""}${this.slot(token, false)}`);
        this.afterValue = true;
        this.lastChar = "]";
        break;
      }
      case "string":
        this.dropEscape();
        this.emit(`${this.quote} + ${this.slot(token, true)} + ${this.quote}`);
        if (this.literal) this.literal.hasSlot = true;
        break;
      case "template":
        this.dropEscape();
        this.emit(`\${${this.slot(token, true)}}`);
        break;
      default:
        // Comments and regular expression literals keep the reference as written.
        this.emit(token.raw);
    }
  }

  /** The rewritten source. */
  finish(): string {
    this.endWord();
    this.decideWrap("");
    return this.out.join("");
  }

  /** Handles one character of code; returns how many extra characters it consumed. */
  private codeChar(char: string, next: string): number {
    if (WORD_CHAR.test(char)) {
      this.decideWrap(char);
      this.word += char;
      this.emit(char);
      return 0;
    }
    this.endWord();
    if (/\s/.test(char)) {
      this.emit(char);
      return 0;
    }
    this.decideWrap(char);
    if (char === "/" && next === "/") {
      this.mode = "line-comment";
      this.emit("//");
      return 1;
    }
    if (char === "/" && next === "*") {
      this.mode = "block-comment";
      this.emit("/*");
      return 1;
    }
    if (char === "'" || char === '"') {
      this.out.push("");
      this.literal = { open: this.out.length - 1, keyCandidate: this.lastChar === "{" || this.lastChar === ",", hasSlot: false };
      this.emit(char);
      this.mode = "string";
      this.quote = char;
      this.escaped = false;
      return 0;
    }
    if (char === "`") {
      this.emit(char);
      this.nesting.push({ kind: "template", braces: this.braces });
      this.mode = "template";
      this.escaped = false;
      return 0;
    }
    if (char === "/" && !this.afterValue) {
      this.emit(char);
      this.mode = "regex";
      this.escaped = false;
      this.regexClass = false;
      return 0;
    }
    if (char === "}" && this.braces === 0 && this.nesting[this.nesting.length - 1]?.kind === "substitution") {
      // The end of a template literal's `${…}`: back to its text.
      this.emit(char);
      this.nesting.pop();
      this.mode = "template";
      this.escaped = false;
      return 0;
    }
    if (char === "{") this.braces++;
    if (char === "}") this.braces = Math.max(0, this.braces - 1);
    this.emit(char);
    this.afterValue = char === ")" || char === "]";
    this.lastChar = char;
    return 0;
  }

  /** The next significant character (`""` for a reference or the end) settles a pending literal's brackets. */
  private decideWrap(next: string): void {
    const wrap = this.pendingWrap;
    if (!wrap) return;
    this.pendingWrap = null;
    const asKey = wrap.keyCandidate && next === ":";
    this.out[wrap.open] = (asKey ? "[" : "(") + this.out[wrap.open];
    this.out[wrap.close] += asKey ? "]" : ")";
  }

  private closeString(): void {
    this.mode = "code";
    this.afterValue = true;
    this.lastChar = this.quote;
    const literal = this.literal;
    this.literal = null;
    if (literal?.hasSlot) this.pendingWrap = { open: literal.open, close: this.out.length - 1, keyCandidate: literal.keyCandidate };
    this.out.push("");
  }

  private endWord(): void {
    if (this.word === "") return;
    this.afterValue = !KEYWORDS_BEFORE_EXPRESSION.has(this.word);
    this.lastChar = this.word[this.word.length - 1];
    this.word = "";
  }

  /** A backslash right before a reference escaped its first character (`\{` is `{`), so it goes. */
  private dropEscape(): void {
    if (!this.escaped) return;
    this.escaped = false;
    const last = this.out.length - 1;
    this.out[last] = this.out[last].slice(0, -1);
  }

  private slot(token: Token, asText: boolean): string {
    this.slots.push({ token, asText });
    return `__refs[${this.slots.length - 1}]`;
  }

  private emit(text: string): void {
    this.out[this.out.length - 1] += text;
  }
}

/**
 * Text about rewritten code (an error message) in the user's terms: each `__refs[i]` becomes the
 * reference it stands for, as written (`refs[i]`), so no message shows the internal name.
 */
export function inUserTerms(text: string, refs: readonly string[]): string {
  return text.replace(/__refs\[(\d+)\]/g, (placeholder, index: string) => refs[Number(index)] ?? placeholder);
}

/** Rewrites code so each reference becomes `__refs[i]`; see the module comment for what each means. */
export function compileCode(code: string): CompiledCode {
  const rewriter = new CodeRewriter();
  for (const part of parseTemplate(code)) {
    if (part.kind === "text") rewriter.text(part.text);
    else rewriter.token(part);
  }
  return { source: rewriter.finish(), slots: rewriter.slots };
}
