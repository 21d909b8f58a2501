/**
 * One of the library's own short transactions on one connection of a driver's pool: `begin`, then
 * `work`, COMMIT, or ROLLBACK when `work` throws. `onBroken` hears of a ROLLBACK that failed too:
 * that connection must not go back into its pool.
 */
export async function inOwnTransaction<T>(exec: (sql: string) => Promise<unknown>, begin: readonly string[], work: () => Promise<T>, onBroken: () => void): Promise<T> {
  for (const sql of begin) await exec(sql);
  try {
    const result = await work();
    await exec('COMMIT');
    return result;
  } catch (error) {
    await exec('ROLLBACK').catch(onBroken);
    throw error;
  }
}
