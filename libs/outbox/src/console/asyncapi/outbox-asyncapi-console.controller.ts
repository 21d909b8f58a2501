import { Get, Header, Inject } from '@nestjs/common';
import { OutboxAsyncApi } from '../../nest/asyncapi/outbox-asyncapi.service';
import type { AsyncApiDocument } from '../../core/asyncapi/asyncapi-document.types';
import { toYaml } from '../../core/asyncapi/to-yaml';

/**
 * The AsyncAPI 3.0 document of what the app publishes, as JSON and YAML. Mounted by
 * `OutboxConsoleModule` at the console's path and behind its guard, like the rest of the console.
 */
export class OutboxAsyncApiConsoleController {
  // Named: an undecorated class gets no parameter types from the compiler.
  constructor(@Inject(OutboxAsyncApi) private readonly asyncApi: OutboxAsyncApi) {}

  @Get('api/asyncapi.json')
  @Header('Cache-Control', 'no-store')
  json(): AsyncApiDocument {
    return this.asyncApi.document();
  }

  @Get('api/asyncapi.yaml')
  @Header('Content-Type', 'application/yaml; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  yaml(): string {
    return toYaml(this.asyncApi.document());
  }
}
