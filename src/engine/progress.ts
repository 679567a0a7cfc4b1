// One place that tells the world what the agent is doing: the journal's status line (for
// `sno-reconfigure status`), systemd's STATUS= (for `systemctl status`), the console banner, and the log.
//
// The journal is written before a call returns (it is the state a restart reads). STATUS= and the banner are
// for people and say what is going on NOW: they go out in the background, the latest of each replacing any
// still unsent, so a step never waits for `systemd-notify` or `agetty --reload` (issue #8: each phase change
// cost the run two process starts). flush() waits for them; the runner calls it before it exits.
import { writeBanner, type BannerContent } from '../host/banner';
import { whyUnreadable, type Host } from '../host/host';
import { BANNER_PATH } from '../paths';
import type { Notifier } from '../host/notify';
import type { Logger } from '../log';
import type { Journal } from './journal';

/**
 * The banner is rewritten on every phase change, and for progress lines at most this often (agetty redraws the
 * console on each); a progress line held back is shown when the interval is over, so the console always ends up
 * with the latest detail ("waiting for ping 10.17.0.1 (58s of 2m)"), never only the step's title.
 */
export const BANNER_PROGRESS_EVERY_MS = 15_000;
/**
 * Phases follow each other at most this often on the console: a run whose steps are already in place goes through
 * a dozen in a second, and each redraw (`agetty --reload`) cost a process start and a flicker nobody could read
 * (23 redraws in a five-second run of the simulator). The latest phase held back is shown when the gap is over.
 * Problems and the outcome are shown at once.
 */
export const BANNER_PHASE_GAP_MS = 1_000;

export class ProgressReporter {
  private lastBannerAt = -Infinity;
  /** A banner held back by the interval or the gap, when it is due, and the timer that shows it. */
  private heldBanner: { banner: BannerContent; dueAt: number; timer: ReturnType<typeof setTimeout> } | undefined;
  private headline = '';
  /** STATUS= and banner updates not sent yet: only the latest of each matters (both say what is going on now). */
  private pending: { status?: string; banner?: BannerContent } = {};
  private pump: Promise<void> | undefined;
  /** Why the banner could not be written last time: said once, not at every update. */
  private bannerProblem: string | undefined;

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
    await this.show(headline, { ...banner, headline }, BANNER_PHASE_GAP_MS);
  }

  /** A progress line within the phase (waits): status everywhere, banner throttled. */
  async detail(text: string): Promise<void> {
    await this.show(`${this.headline}: ${text}`, { tone: 'progress', headline: this.headline, lines: [text] }, BANNER_PROGRESS_EVERY_MS);
  }

  /** An outcome that needs a person: shown on the banner at once. */
  async problem(headline: string, lines: string[], tone: 'error' | 'waiting' | 'retrying' = 'error'): Promise<void> {
    this.headline = headline;
    await this.show(headline, { tone, headline, lines }, 0);
  }

  /** The banner the run ends with: it replaces any banner still waiting to be shown, and is waited for. */
  async outcome(banner: BannerContent): Promise<void> {
    if (!this.banner) return this.flush();
    // A banner still held back (a progress line, a phase) is older than the outcome: it must not follow it.
    this.showBanner(banner);
    this.kick();
    await this.flush();
  }

  /** The run's last STATUS= line (the outcome banner is already up): after anything still unsent. */
  finalStatus(text: string): void {
    this.pending.status = text;
    this.kick();
  }

  private showBanner(banner: BannerContent): void {
    if (this.heldBanner) clearTimeout(this.heldBanner.timer);
    this.heldBanner = undefined;
    this.lastBannerAt = this.now();
    this.pending.banner = banner;
  }

  private holdBanner(banner: BannerContent, waitMs: number): void {
    const dueAt = this.now() + waitMs;
    if (this.heldBanner && this.heldBanner.dueAt <= dueAt) {
      this.heldBanner.banner = banner;
      return;
    }
    if (this.heldBanner) clearTimeout(this.heldBanner.timer);
    const timer = setTimeout(() => {
      const held = this.heldBanner;
      if (!held) return;
      this.showBanner(held.banner);
      this.kick();
    }, waitMs);
    timer.unref();
    this.heldBanner = { banner, dueAt, timer };
  }

  /** Resolves once every STATUS= and banner update asked for so far has gone out (or was superseded). */
  async flush(): Promise<void> {
    while (this.pump) await this.pump;
  }

  /** Sends what is pending, the latest of each kind, until nothing is. */
  private kick(): void {
    if (this.pump) return;
    this.pump = (async () => {
      while (this.pending.status !== undefined || this.pending.banner) {
        const { status, banner } = this.pending;
        this.pending = {};
        if (status !== undefined) await this.notifier.status(status).catch((e: unknown) => this.log.debug({ err: (e as Error).message }, 'status notification failed'));
        if (banner) await writeBanner(this.host, banner).then(() => (this.bannerProblem = undefined), (e: unknown) => this.bannerFailed(e));
      }
    })().finally(() => {
      this.pump = undefined;
      if (this.pending.status !== undefined || this.pending.banner) this.kick();
    });
  }

  private bannerFailed(e: unknown): void {
    const why = whyUnreadable(e);
    if (why === this.bannerProblem) return;
    this.bannerProblem = why;
    this.log.warn({ path: BANNER_PATH }, `the console banner ${BANNER_PATH} cannot be written (${why}), so the console does not show the agent's progress; the journal and sno-reconfigure status still do. Move what is there aside (mv ${BANNER_PATH} ${BANNER_PATH}.bad): the banner comes back at the agent's next update`);
  }

  /** `everyMs`: how long after the last banner shown this one may follow (0: at once). */
  private async show(status: string, banner: BannerContent, everyMs: number): Promise<void> {
    this.notifier.alive();
    this.pending.status = status;
    if (this.banner) {
      const wait = everyMs - (this.now() - this.lastBannerAt);
      if (wait <= 0) this.showBanner(banner);
      else this.holdBanner(banner, wait);
    }
    this.kick();
    if (this.journal) {
      this.journal.data.status = status;
      await this.journal.save();
    }
  }
}
