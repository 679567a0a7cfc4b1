// What to do, in two parts (issue 27): what the person at the node can do (a cable, the switch port, the second
// stick, a `.txt` name), and — when that is not it — what the office must do. A store cannot correct a
// site-config (signed media), so a remedy never asks the person at the node to edit one.

/** What the person at the node can do, and what the office must do when that does not help. */
export interface Remedy {
  here: string;
  office?: string;
}

/** The office's part when the media itself must change. */
export const NEW_MEDIA = 'they must send new media';

/** The lines a banner or `status` shows for a remedy: "What to do: …" and, when the office may be needed, "Otherwise call …". */
export function remedyLines(remedy: string | undefined, office: string | undefined): string[] {
  return [...(remedy ? [`What to do: ${remedy}`] : []), ...(office ? [officeLine(office)] : [])];
}

export function officeLine(office: string): string {
  return `Otherwise call the office with the store name and this line: ${office}.`;
}
