/**
 * Runs each clean-up step in order, every one even when an earlier one fails (a server left running
 * or a database left behind would outlive the test and trouble the next), then throws the first
 * failure, or all of them together.
 */
export async function closeAll(...steps: Array<() => unknown>): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} clean-up steps failed: ${failures.map(String).join('; ')}`);
}
