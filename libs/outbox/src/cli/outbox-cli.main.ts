#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './outbox-cli';
import { redactText, secretsOf, urlsOf } from './cli-redaction';

// The `nest-outbox` command of the package (see `nest-outbox --help`).
runCli(process.argv.slice(2), { out: (line) => console.log(line), err: (line) => console.error(line), env: process.env }).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    // Not expected (runCli prints its errors), and still never with a password in it.
    const secrets = urlsOf(process.argv.slice(2), process.env).flatMap(secretsOf);
    console.error(redactText(error instanceof Error ? (error.stack ?? error.message) : String(error), secrets));
    process.exitCode = 2;
  },
);
