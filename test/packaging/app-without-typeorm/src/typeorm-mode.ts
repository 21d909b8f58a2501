// The same app declaring OutboxModule without `connection`, which is choosing TypeORM: with neither
// typeorm nor @nestjs/typeorm installed, it must fail at bootstrap saying what to install.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OutboxModule } from '@nest-outbox/outbox';

@Module({ imports: [OutboxModule.forRoot({ pollIntervalMs: 100 })] })
export class TypeOrmAppModule {}

void NestFactory.createApplicationContext(TypeOrmAppModule).then((app) => app.close());
