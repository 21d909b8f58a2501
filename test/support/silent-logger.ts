import type { LoggerService } from '@nestjs/common';

/**
 * For modules whose compile() is expected to fail on bad options: set before compile, it also
 * quiets the TypeORM connection still settling in parallel (its "Unable to connect… Retrying"
 * line and stack would otherwise reach the test output, since useLogger(false) comes after compile).
 */
export const silentLogger: LoggerService = { log() {}, error() {}, warn() {} };
