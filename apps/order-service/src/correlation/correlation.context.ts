import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

interface RequestContext {
  correlationId: string;
  tenantId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Puts the caller's X-Correlation-Id (or a new one) and X-Tenant-Id in scope for the request. */
export function correlationMiddleware(request: Request, response: Response, next: NextFunction): void {
  const correlationId = request.header('x-correlation-id') || randomUUID();
  response.setHeader('x-correlation-id', correlationId);
  storage.run({ correlationId, tenantId: request.header('x-tenant-id') || undefined }, next);
}

export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}
