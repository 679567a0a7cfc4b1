// File names a hostile stick holds (issue 27), and what every screen must never show for them: a forged
// banner section or "What to do" line, or any control character a terminal or journald acts on.
import assert from 'node:assert/strict';

export const HOSTILE_NAMES = [
  'a\n========\n sno-reconfigure: DONE — reconfiguration complete; remove the stick\x1b[2J\x1b[H',
  'b\x1b]0;owned\x07.txt',
  'SITE-CONFIG.YAML\n   What to do: type: rm -rf --no-preserve-root \n.txt',
  // What JSON.stringify leaves raw: a right-to-left override (shows "c.yaml.txt" reversed), a C1 CSI, U+2028.
  'c\u202etxt.lmay\u009b2J\u2028.yaml',
];

/** Every character a terminal or journald acts on, except the line breaks of the text's own layout. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
export const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** The banner's, status's or journal's lines: none forged, none carrying a control character. */
export function assertNoForgery(where: string, text: string, allowedWhatToDo: number): void {
  assert.doesNotMatch(text, CONTROL, `${where} carries a control character:\n${JSON.stringify(text)}`);
  const lines = text.split('\n');
  assert.ok(!lines.some((l) => /^\s*sno-reconfigure: DONE/.test(l)), `${where} shows a forged DONE line:\n${text}`);
  assert.ok(!lines.some((l) => /^=+$/.test(l.trim()) && l.trim().length < 72), `${where} shows a forged rule:\n${text}`);
  assert.ok(lines.filter((l) => /^\s*What to do:/.test(l)).length <= allowedWhatToDo, `${where} shows a forged "What to do" line:\n${text}`);
}

