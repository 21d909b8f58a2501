import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

interface RequestContext {
  correlationId: string;
  tenantId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Ids travel into every event's metadata and headers: short, printable, no spaces. */
const ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Puts the caller's X-Correlation-Id (or a new one) and X-Tenant-Id in scope for the request; refuses malformed ones with 400. */
export function correlationMiddleware(request: Request, response: Response, next: NextFunction): void {
  for (const header of ['x-correlation-id', 'x-tenant-id']) {
    const value = request.header(header);
    if (value !== undefined && value !== '' && !ID.test(value)) {
      response.status(400).json({
        statusCode: 400,
        error: 'Bad Request',
        message: `Header ${header} must be 1–128 letters, digits or ._:@/+=- characters.`,
      });
      return;
    }
  }
  const correlationId = request.header('x-correlation-id') || randomUUID();
  response.setHeader('x-correlation-id', correlationId);
  storage.run({ correlationId, tenantId: request.header('x-tenant-id') || undefined }, next);
}

export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}
