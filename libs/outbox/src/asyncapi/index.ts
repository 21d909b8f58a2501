// @nest-outbox/outbox/asyncapi: the AsyncAPI 3.0 document of what the app publishes.
export { OutboxAsyncApi } from '../nest/asyncapi/outbox-asyncapi.service';
export { buildAsyncApiDocument, type AsyncApiInput } from '../core/asyncapi/asyncapi-document';
export type { AsyncApiOptions } from '../core/asyncapi/asyncapi-options';
export type { AsyncApiDocument, AsyncApiChannel, AsyncApiMessage, AsyncApiOperation, AsyncApiInfo } from '../core/asyncapi/asyncapi-document.types';
