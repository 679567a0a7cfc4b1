// One place that tells the world what the agent is doing: the journal's status line (for
// `sno-reconfigure status`), systemd's STATUS= (for `systemctl status`), the console banner, and the log.
import { writeBanner, type BannerContent } from '../host/banner';
import type { Host } from '../host/host';
import type { Notifier } from '../host/notify';
import type { Logger } from '../log';
import type { Journal } from './journal';

/** The banner is rewritten on every phase change, and for progress lines at most this often. */
const BANNER_PROGRESS_EVERY_MS = 60_000;

export class ProgressReporter {
  private lastBannerAt = 0;
  private headline = '';

  constructor(
    private readonly host: Host,
    private readonly journal: Journal | undefined,
    private readonly notifier: Notifier,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    /** Off for `--dry-run`: the console banner is a change too. */
    private readonly banner = true,
  ) {}

  /** A new phase: logged at info, shown everywhere at once. */
  async phase(headline: string, banner: Omit<BannerContent, 'headline'> = { tone: 'progress' }): Promise<void> {
    this.headline = headline;
    this.log.info({ phase: headline }, headline);
    await this.show(headline, { ...banner, headline }, true);
  }

  /** A progress line within the phase (waits): status everywhere, banner throttled. */
  async detail(text: string): Promise<void> {
    await this.show(`${this.headline}: ${text}`, { tone: 'progress', headline: this.headline, lines: [text] }, false);
  }

  /** An outcome that needs a person: shown on the banner at once. */
  async problem(headline: string, lines: string[], tone: 'error' | 'waiting' = 'error'): Promise<void> {
    this.headline = headline;
    await this.show(headline, { tone, headline, lines }, true);
  }

  private async show(status: string, banner: BannerContent, force: boolean): Promise<void> {
    this.notifier.alive();
    await this.notifier.status(status);
    if (this.journal) {
      this.journal.data.status = status;
      await this.journal.save();
    }
    if (this.banner && (force || this.now() - this.lastBannerAt >= BANNER_PROGRESS_EVERY_MS)) {
      this.lastBannerAt = this.now();
      try {
        await writeBanner(this.host, banner);
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, 'could not update the console banner');
      }
    }
  }
}
