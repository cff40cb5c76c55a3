import { Module } from '@nestjs/common';
import { SessionSkillsController, TenantSkillsController } from './skills.controller';
import { SkillsService } from './skills.service';

@Module({ controllers: [TenantSkillsController, SessionSkillsController], providers: [SkillsService] })
export class SkillsModule {}
