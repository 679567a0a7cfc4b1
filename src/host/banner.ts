// The console banner: agetty prints every *.issue file in /etc/issue.d before the login prompt
// (agetty(8), "ISSUE FILES"); `agetty --reload` makes running gettys redraw it (util-linux >= 2.35).
import type { Host } from './host';
import { BANNER_PATH } from '../paths';
import { screenLine } from '../util/screen-text';

export type BannerTone = 'progress' | 'waiting' | 'retrying' | 'error' | 'success';

export interface BannerContent {
  tone: BannerTone;
  headline: string;
  lines?: string[];
}

const TONE_PREFIX: Record<BannerTone, string> = {
  progress: 'IN PROGRESS',
  waiting: 'WAITING',
  retrying: 'RETRYING',
  error: 'ACTION NEEDED',
  success: 'DONE',
};

/**
 * The status command a technician types at this node's console: on the podman runtime (the launcher runs the
 * agent with host tools through chroot) it is the launcher's, since RHCOS has no `sno-reconfigure` of its own.
 */
export function statusCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.SNO_RECONFIGURE_HOST_TOOLS === 'chroot' ? 'sno-reconfigure-podman status' : 'sno-reconfigure status';
}

/**
 * How a technician asks for a refused site network to be tried again without re-inserting the media: the
 * running service must stop first (only one agent may run), then `run --retry-network` with the command this
 * runtime has.
 */
export function retryNetworkCommand(env: NodeJS.ProcessEnv = process.env): string {
  const cli = env.SNO_RECONFIGURE_HOST_TOOLS === 'chroot' ? 'sno-reconfigure-podman' : 'sno-reconfigure';
  return `type \`systemctl stop sno-reconfigure\` and then \`${cli} run --retry-network\``;
}

export function renderBanner(content: BannerContent, at: Date, env: NodeJS.ProcessEnv = process.env): string {
  const rule = '='.repeat(72);
  // Each headline and line is one line of the banner whatever it quotes (a file name with a newline or ESC
  // in it: src/util/screen-text.ts); agetty expands backslash escapes in issue files (\n = nodename,
  // \4 = IPv4 …), so our text, those escapes included, is kept literal.
  const escape = (s: string) => screenLine(s).replace(/\\/g, '\\\\');
  return [
    rule,
    ` sno-reconfigure: ${TONE_PREFIX[content.tone]} — ${escape(content.headline)}`,
    ...(content.lines ?? []).map((l) => `   ${escape(l)}`),
    ` (${at.toISOString()})  details: ${statusCommand(env)} | journalctl -u sno-reconfigure`,
    rule,
    '',
  ].join('\n');
}

export async function writeBanner(host: Host, content: BannerContent, at = new Date()): Promise<void> {
  const text = renderBanner(content, at);
  // A named pipe, socket or device there is not read (it could block) but replaced: the rename takes its place.
  if ((await host.readTextIfExists(BANNER_PATH).catch(() => undefined)) === text) return;
  await host.writeFileAtomic(BANNER_PATH, text, 0o644);
  // Best effort: without agetty (or without gettys running) the banner still shows at the next prompt.
  await host.run('agetty', ['--reload'], { timeoutMs: 5_000 });
}
