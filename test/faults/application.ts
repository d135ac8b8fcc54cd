import { killGroup, portAnswers, sleep, spawnGroup, type Supervised, waitFor } from './processes';

/**
 * The API (`api/main.ts`) and the worker (`workers/main.ts`) as the child processes they are in production,
 * each in its own process group so a kill -9 reaches it whole. A child that dies when nobody killed it is
 * recorded and started again after a pause (as a supervisor or a restart policy would), so one death does
 * not take the run down; the report lists every such death.
 */

const UNKNOWN_OUTCOME = 'delivery: an earlier attempt died with an unknown outcome; sending again';

export interface ApplicationEnv {
  env: Record<string, string>;
  apiPort: number;
  metricsPort: number;
}

type Role = 'api' | 'worker';

export class Application {
  private readonly children: Partial<Record<Role, Supervised>> = {};
  private readonly wanted = new Set<Role>();
  /** Deaths nobody caused, by role, with the time. */
  readonly unexpectedExits: Array<{ role: Role; at: number }> = [];
  /** Message ids the worker logged as sent again after an attempt died with an unknown outcome. */
  readonly ambiguous = new Set<string>();
  /** The unknown-outcome counter summed over every worker process so far (scraped; see metrics()). */
  private counterOfEarlierWorkers = 0;
  private counterOfThisWorker = 0;
  private scraper: NodeJS.Timeout | null = null;

  constructor(private readonly settings: ApplicationEnv) {}

  get apiUrl(): string {
    return `http://127.0.0.1:${this.settings.apiPort}`;
  }

  async start(role: Role): Promise<void> {
    this.wanted.add(role);
    const script = role === 'api' ? 'api/main.ts' : 'workers/main.ts';
    const env = { ...this.settings.env, PORT: String(this.settings.apiPort), WORKER_METRICS_PORT: String(this.settings.metricsPort) };
    const child = spawnGroup(role, process.execPath, ['--import', 'tsx', script], env, role === 'worker' ? (line) => this.readWorkerLine(line) : undefined);
    this.children[role] = child;
    if (role === 'worker') {
      this.counterOfEarlierWorkers += this.counterOfThisWorker;
      this.counterOfThisWorker = 0;
    }
    void child.exited.then(() => this.onExit(role, child));
    if (role === 'api') await waitFor('the API', () => this.apiHealthy(), 120_000, 200);
    else await waitFor('the worker metrics endpoint', () => portAnswers(this.settings.metricsPort), 120_000, 200);
  }

  /** kill -9 of one process; it stays down until started again. */
  async kill(role: Role): Promise<void> {
    this.wanted.delete(role);
    const child = this.children[role];
    if (child?.alive()) await killGroup(child);
  }

  /** kill -9 of every application process at once (no process gets to see another one die first). */
  async killAll(): Promise<void> {
    const roles = (['api', 'worker'] as const).filter((role) => this.children[role]?.alive());
    for (const role of roles) this.wanted.delete(role);
    for (const role of roles) {
      const child = this.children[role] as Supervised;
      child.killedOnPurpose = true;
      process.kill(-(child.process.pid as number), 'SIGKILL');
    }
    await Promise.all(roles.map((role) => killGroup(this.children[role] as Supervised)));
  }

  async stopAll(): Promise<void> {
    this.stopScraping();
    await Promise.all((['api', 'worker'] as const).map((role) => this.kill(role)));
  }

  private onExit(role: Role, child: Supervised): void {
    if (child.killedOnPurpose || !this.wanted.has(role) || this.children[role] !== child) return;
    this.unexpectedExits.push({ role, at: Date.now() });
    void sleep(1_000).then(() => (this.wanted.has(role) ? this.start(role) : undefined)).catch(() => undefined);
  }

  async apiHealthy(): Promise<boolean> {
    try {
      const response = await fetch(`${this.apiUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
      return response.ok;
    } catch {
      return false;
    }
  }

  private readWorkerLine(line: string): void {
    if (!line.includes(UNKNOWN_OUTCOME)) return;
    try {
      const entry = JSON.parse(line) as { messageId?: string };
      if (entry.messageId) this.ambiguous.add(entry.messageId);
    } catch {
      // Not a JSON log line.
    }
  }

  /** Scrapes the worker's counter every second, so a worker killed later keeps the count it had reached. */
  startScraping(): void {
    this.scraper ??= setInterval(() => void this.scrape(), 1_000);
  }

  stopScraping(): void {
    if (this.scraper) clearInterval(this.scraper);
    this.scraper = null;
  }

  private async scrape(): Promise<void> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.settings.metricsPort}/metrics`, { signal: AbortSignal.timeout(2_000) });
      const text = await response.text();
      const match = /^messaging_delivery_outcome_unknown_total (\d+)/m.exec(text);
      if (match) this.counterOfThisWorker = Math.max(this.counterOfThisWorker, Number(match[1]));
    } catch {
      // The worker is down or restarting: its last scraped value stands.
    }
  }

  /** `messaging_delivery_outcome_unknown_total` over every worker process of the run, read now. */
  async unknownOutcomeTotal(): Promise<number> {
    await this.scrape();
    return this.counterOfEarlierWorkers + this.counterOfThisWorker;
  }
}
