import { Module } from '@nestjs/common';
import { TransactionRunner } from './transaction.runner';

/** One TransactionRunner for the whole app: the orders and the inbox consumer share its queue on SQLite. */
@Module({ providers: [TransactionRunner], exports: [TransactionRunner] })
export class DatabaseModule {}
