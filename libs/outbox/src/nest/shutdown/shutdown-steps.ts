import { settleWithin } from '../../core/deadline';
import type { StopSteps } from '../../core/stream/delivery-stream.port';
import { SHUTDOWN_STEP_TIMEOUT_MS } from './shutdown-stage';
import { shutdownStepTimedOut } from './shutdown.messages';

/**
 * The steps of one host's shutdown hook: each bounded (a broker or a database that does not answer
 * must not hold the stop; the host moves on without it and says so), and the one running kept, for
 * `[SHUTDOWN_STAGE]()` to report to a shutdown that runs out of time.
 */
export class ShutdownSteps implements StopSteps {
  readonly stepTimeoutMs = SHUTDOWN_STEP_TIMEOUT_MS;
  private current: string | undefined;

  constructor(
    /** Names the host in the warning, e.g. "the outbox relay's". */
    private readonly owner: string,
    private readonly logger: { warn(message: string): void },
  ) {}

  /** The step running now; undefined outside the hook. */
  get stage(): string | undefined {
    return this.current;
  }

  async run(stage: string, work: Promise<unknown>, timeoutMs = SHUTDOWN_STEP_TIMEOUT_MS): Promise<void> {
    this.current = stage;
    if ((await settleWithin(work, timeoutMs)) === 'timeout') this.logger.warn(shutdownStepTimedOut(`${this.owner} ${stage}`, timeoutMs));
  }

  done(): void {
    this.current = undefined;
  }
}
