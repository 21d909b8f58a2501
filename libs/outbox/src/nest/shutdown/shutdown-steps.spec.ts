import { ShutdownSteps } from './shutdown-steps';

describe('ShutdownSteps', () => {
  it('reports the step running, moves on past its deadline saying so, and reports nothing when done', async () => {
    const warnings: string[] = [];
    const steps = new ShutdownSteps("the outbox relay's", { warn: (text) => warnings.push(text) });
    let seen: string | undefined;
    await steps.run('closing transport "kafka"', new Promise((resolve) => setTimeout(() => resolve((seen = steps.stage)), 5)));
    expect(seen).toBe('closing transport "kafka"');
    expect(warnings).toEqual([]);
    await steps.run('handing back leases', new Promise(() => undefined), 20);
    expect(steps.stage).toBe('handing back leases');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("the outbox relay's handing back leases");
    steps.done();
    expect(steps.stage).toBeUndefined();
  });
});
