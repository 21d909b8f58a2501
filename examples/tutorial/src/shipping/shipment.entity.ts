import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('shipments')
export class Shipment {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  orderId: string;

  @Column({ type: 'varchar', length: 64 })
  customerId: string;

  @CreateDateColumn()
  createdAt: Date;
}
