import { Module } from '@nestjs/common';
import { SessionsController } from './sessions.controller';
import { StoreController } from './store.controller';
import { SessionsService } from './sessions.service';

@Module({ controllers: [SessionsController, StoreController], providers: [SessionsService] })
export class SessionsModule {}
