// Text that reaches a person — the console banner, `status`, the journal, a terminal — passes through here.
// Much of it comes from media or the cluster (file and folder names, labels, YAML keys, quoted values, names
// from manifests): a file named `a⏎====⏎ sno-reconfigure: DONE …␛[2J` must not forge a banner section, clear
// the screen or set the terminal title (issue 27). Control characters are shown as escapes instead:
// C0 and DEL, C1 (U+0080–U+009F: some terminals act on U+009B as CSI), the line and paragraph separators
// U+2028/U+2029 and the bidirectional marks and overrides (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069: they
// reorder what is shown, CVE-2021-42574), and the characters that show nothing at all (U+00AD, U+180E, U+200B–U+200D,
// U+2060–U+206F, U+FEFF, U+FFF9–U+FFFB: Unicode's format characters; two site names differing only by one looked the
// same on every screen, the seventh hostile re-test of issue 36). journald stores a message holding a control character other than
// newline and tab as a blob (`[331B blob data]`; systemd src/basic/utf8.c utf8_is_printable_newline with
// unichar_is_control: below 0x20, and 0x7F–0x9F), so escaped lines stay text there too.
/** Everything above C0 that is escaped: DEL and C1, the separators, bidi marks and the characters that show nothing. */
const BEYOND_C0 = '\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb';
const CONTROL = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g');
/** The same, except newline and tab: for multi-line text whose lines were made safe where they were composed. */
const CONTROL_BUT_LAYOUT = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${BEYOND_C0}]`, 'g');

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(c: string): string {
  const code = c.charCodeAt(0);
  return SHORT[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/** How long one line on the console banner or in `status` may be; the journal takes longer lines. */
export const SCREEN_LINE_MAX = 600;
export const JOURNAL_LINE_MAX = 4000;

/**
 * One line as a person may see it: every control character shown as an escape (`\n`, `\x1b`, `\u2028`), and
 * at most `max` characters, the rest replaced by an ellipsis.
 */
export function screenLine(text: string, max = SCREEN_LINE_MAX): string {
  const shown = text.replace(CONTROL, escapeOne);
  if (shown.length <= max) return shown;
  // Never cut a surrogate pair in two (that would be an unpaired half on screen).
  const cut = /[\ud800-\udbff]/.test(shown[max - 2] ?? '') ? max - 2 : max - 1;
  return `${shown.slice(0, cut)}…`;
}

/**
 * Multi-line terminal output (each line composed by the command): its lines kept, any other control character
 * escaped. DEL and above as \u escapes: a command's --json output holds them raw (JSON.stringify leaves them), and
 * `\u0085` keeps that JSON valid where `\x85` would not.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL_BUT_LAYOUT, (c) => (c.charCodeAt(0) < 0x20 ? escapeOne(c) : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * JSON for a terminal or the journal: the same value, with the characters JSON.stringify leaves raw (DEL, C1,
 * separators, bidi marks) written as \u escapes, so the output is valid JSON that shows no control character.
 */
export function screenJson(json: string): string {
  return json.replace(CONTROL_BUT_LAYOUT, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
