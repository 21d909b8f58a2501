import { ConflictException, Injectable, NotFoundException, UnprocessableEntityException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { CreateOrderDto } from './dto/create-order.dto';
import { Order, OrderStateError } from './order.entity';

/** Use cases of the order aggregate. Each one is a transaction; the outbox rides along in it. */
@Injectable()
export class OrdersService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  place(dto: CreateOrderDto): Promise<Order> {
    let order: Order;
    try {
      order = Order.place(dto.customerId, dto.items);
    } catch (error) {
      if (error instanceof OrderStateError) throw new UnprocessableEntityException(error.message);
      throw error;
    }
    return this.dataSource.transaction((manager) => manager.save(order));
  }

  async find(id: string): Promise<Order> {
    return this.load(this.dataSource.manager, id);
  }

  pay(id: string): Promise<Order> {
    return this.change(id, (order) => order.pay());
  }

  cancel(id: string, reason: string): Promise<Order> {
    return this.change(id, (order) => order.cancel(reason));
  }

  private change(id: string, decide: (order: Order) => void): Promise<Order> {
    return this.dataSource.transaction(async (manager) => {
      const order = await this.load(manager, id, true);
      try {
        decide(order);
      } catch (error) {
        if (error instanceof OrderStateError) throw new ConflictException(error.message);
        throw error;
      }
      return manager.save(order);
    });
  }

  private async load(manager: EntityManager, id: string, forUpdate = false): Promise<Order> {
    // Row lock (PostgreSQL, MariaDB) so two concurrent changes of one order apply one after the other.
    // PostgreSQL refuses FOR UPDATE on the outer join of the eager lines, hence `tables`; MariaDB has no FOR UPDATE OF.
    const type = manager.connection.options.type;
    const lock = !forUpdate || type === 'better-sqlite3' ? undefined : type === 'postgres' ? { mode: 'pessimistic_write' as const, tables: ['orders'] } : { mode: 'pessimistic_write' as const };
    const order = await manager.findOne(Order, { where: { id }, lock });
    if (!order) throw new NotFoundException(`Order ${id} does not exist.`);
    return order;
  }
}
