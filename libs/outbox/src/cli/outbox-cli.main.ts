#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './outbox-cli';

// The `nest-outbox` command of the package (see `nest-outbox --help`).
runCli(process.argv.slice(2), { out: (line) => console.log(line), err: (line) => console.error(line), env: process.env }).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(error);
    process.exitCode = 2;
  },
);
