import { EventEmitter } from 'node:events';
import type { INestMicroservice } from '@nestjs/common';
import { Subject } from 'rxjs';
import { ConsumerReadiness } from './consumer-readiness';

const EVENTS = { GROUP_JOIN: 'consumer.group_join', STOP: 'consumer.stop', CRASH: 'consumer.crash' };

/** A Nest Kafka microservice as far as ConsumerReadiness sees it: its status stream and its unwrapped kafkajs consumer. */
function kafkaMicroservice() {
  const status = new Subject<string>();
  const emitter = new EventEmitter();
  const consumer = { events: EVENTS, on: (event: string, listener: (e: unknown) => void) => emitter.on(event, listener) };
  let started = false;
  const microservice = {
    status: status.asObservable(),
    unwrap: () => {
      if (!started) throw new Error('Not initialized. Please call the "listen"/"startAllMicroservices" method before accessing the server.');
      return [{}, consumer, {}];
    },
  } as unknown as INestMicroservice;
  return {
    microservice,
    connected: () => {
      started = true;
      status.next('connected');
    },
    emit: (event: keyof typeof EVENTS, payload: unknown = {}) => {
      if (event === 'CRASH') status.next('crashed');
      emitter.emit(EVENTS[event], { payload });
    },
  };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('ConsumerReadiness', () => {
  it('reports a Kafka consumer that crashed during its startup as failed, although the startup then ended', async () => {
    const kafka = kafkaMicroservice();
    const readiness = new ConsumerReadiness();
    const startup = deferred();
    readiness.follow([kafka.microservice]);
    readiness.track(startup.promise);
    kafka.connected();
    // kafkajs' run() catches a failed group join, emits CRASH and resolves.
    kafka.emit('CRASH', { restart: false, error: new Error('This most likely occurs because of a request being malformed') });
    startup.resolve();
    await settled();
    expect(readiness.snapshot()).toMatchObject({ state: 'failed', error: 'the Kafka consumer stopped after: This most likely occurs because of a request being malformed' });
  });

  it('is ready once the Kafka consumer joined its group, joining while it restarts after a crash, and ready again when it rejoined', async () => {
    const kafka = kafkaMicroservice();
    const readiness = new ConsumerReadiness();
    const startup = deferred();
    readiness.follow([kafka.microservice]);
    readiness.track(startup.promise);
    kafka.connected();
    expect(readiness.snapshot().state).toBe('joining');
    kafka.emit('GROUP_JOIN');
    startup.resolve();
    await settled();
    expect(readiness.snapshot().state).toBe('ready');

    kafka.emit('CRASH', { restart: true, error: new Error('Connection error: connect ECONNREFUSED') });
    expect(readiness.snapshot()).toMatchObject({ state: 'joining', error: 'restarting after: Connection error: connect ECONNREFUSED' });
    kafka.emit('GROUP_JOIN');
    expect(readiness.snapshot().state).toBe('ready');

    kafka.emit('STOP');
    expect(readiness.snapshot()).toMatchObject({ state: 'failed', error: 'the Kafka consumer stopped' });
  });

  it('is not ready when the Kafka consumer ended its startup without joining', async () => {
    const kafka = kafkaMicroservice();
    const readiness = new ConsumerReadiness();
    readiness.follow([kafka.microservice]);
    readiness.track(Promise.resolve());
    kafka.connected();
    await settled();
    expect(readiness.snapshot().state).toBe('joining');
  });

  it('is ready when the startup of a transport without a Kafka consumer (TCP) ends, and failed when it fails', async () => {
    const tcp = { status: new Subject<string>().asObservable(), unwrap: () => ({}) } as unknown as INestMicroservice;
    const ready = new ConsumerReadiness();
    ready.follow([tcp]);
    ready.track(Promise.resolve());
    await settled();
    expect(ready.snapshot().state).toBe('ready');

    const failed = new ConsumerReadiness();
    failed.follow([tcp]);
    failed.track(Promise.reject(new Error('listen EADDRINUSE: address already in use 127.0.0.1:3001')));
    await settled();
    expect(failed.snapshot()).toMatchObject({ state: 'failed', error: 'listen EADDRINUSE: address already in use 127.0.0.1:3001' });
  });
});
