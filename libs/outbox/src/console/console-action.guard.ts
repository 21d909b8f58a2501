import { applyDecorators, ForbiddenException, HttpCode, Inject, Injectable, Post, UnsupportedMediaTypeException, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { OUTBOX_CONSOLE_OPTIONS } from './outbox-console.constants';
import { consoleReadOnly, mutationsNeedJson } from './outbox-console.messages';
import type { ResolvedConsoleOptions } from './outbox-console.options';

/**
 * Runs after the operator's guard on every action: read-only consoles refuse them (403), and an
 * action needs a JSON body, which a plain HTML form on another site cannot send (no CSRF by form post).
 */
@Injectable()
export class ConsoleActionGuard implements CanActivate {
  constructor(@Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.options.readOnly) throw new ForbiddenException(consoleReadOnly());
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) throw new UnsupportedMediaTypeException(mutationsNeedJson());
    return true;
  }
}

/** An operator's action on the console: a POST that answers 200 once ConsoleActionGuard let it through. */
export const ConsoleAction = (path: string) => applyDecorators(Post(path), HttpCode(200), UseGuards(ConsoleActionGuard));
