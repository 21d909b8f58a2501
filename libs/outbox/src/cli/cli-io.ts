/** Where a command writes, and the environment it reads: the process's own, or a test's. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}
