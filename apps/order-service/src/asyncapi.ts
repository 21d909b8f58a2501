import { AppModule } from './app.module';
import { loadOrderServiceConfig } from './config/order-service.config';

/**
 * The root module, configured from the environment as main.ts does, for
 * `nest-outbox asyncapi --app dist/apps/order-service/apps/order-service/src/asyncapi.js`.
 */
export default () => AppModule.register(loadOrderServiceConfig());
