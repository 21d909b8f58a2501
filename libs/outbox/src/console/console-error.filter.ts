import { BadRequestException, Catch, ConflictException, Injectable, NotFoundException, type ArgumentsHost, type ExceptionFilter, type HttpException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ConsoleError } from '../core/console/console.error';

/** Console errors as Nest HTTP exceptions: invalid → 400 (naming the field), not-found → 404, conflict → 409. */
@Catch(ConsoleError)
@Injectable()
export class ConsoleErrorFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: ConsoleError, host: ArgumentsHost): void {
    const exception = toHttp(error);
    this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), exception.getResponse(), exception.getStatus());
  }
}

function toHttp(error: ConsoleError): HttpException {
  switch (error.kind) {
    case 'invalid':
      return new BadRequestException({ statusCode: 400, error: 'Bad Request', message: [error.message], field: error.field });
    case 'not-found':
      return new NotFoundException(error.message);
    case 'conflict':
      return new ConflictException(error.message);
  }
}
