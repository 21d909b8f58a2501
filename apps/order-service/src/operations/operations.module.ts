import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { MetricsRegistryModule } from './metrics-registry.module';
import { OperationsController } from './operations.controller';
import { ConsumerReadiness } from './consumer-readiness';

/** `/metrics`, `/health` and `/health/consumer`. */
@Module({
  imports: [TerminusModule, MetricsRegistryModule],
  controllers: [OperationsController],
  providers: [ConsumerReadiness],
  exports: [ConsumerReadiness],
})
export class OperationsModule {}
