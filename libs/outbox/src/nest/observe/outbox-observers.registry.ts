import { Injectable } from '@nestjs/common';
import { RelayActivityTracker } from '../../core/observe/relay-activity';
import { combineObservers, type RelayObserver } from '../../core/observe/relay-observer';

/**
 * The relay's observers in one place: metrics, tracing and diagnostics add theirs while the
 * module initializes, before the relay host builds the relay at bootstrap.
 */
@Injectable()
export class OutboxObservers {
  readonly activity = new RelayActivityTracker();
  private readonly observers: RelayObserver[] = [this.activity];

  add(observer: RelayObserver): void {
    this.observers.push(observer);
  }

  /** All observers as one: call it once the module has initialized (at bootstrap), when every observer is in. */
  combined(): RelayObserver {
    return combineObservers(this.observers);
  }
}
