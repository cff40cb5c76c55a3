import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { apiTenancy, type AppConfig } from '@codemode/config';
import type { Logger } from '@codemode/telemetry';
import { AllExceptionsFilter } from './http/all-exceptions.filter';
import { AuthGuard } from './http/auth.guard';
import { ConsoleModule } from './console/console.module';
import { CoreModule } from './core/core.module';
import { DocsModule } from './docs/docs.module';
import { APP_CONFIG, LOGGER } from './core/tokens';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { McpModule } from './mcp/mcp.module';
import { NodesModule } from './nodes/nodes.module';
import { MetricsModule } from './metrics/metrics.module';
import { PublicMetricsModule } from './metrics/public-metrics.module';
import { QuotasModule } from './quotas/quotas.module';
import { TenantRateGuard } from './quotas/tenant-rate.guard';
import { RunsModule } from './runs/runs.module';
import { SessionsModule } from './sessions/sessions.module';
import { ShellModule } from './shell/shell.module';
import { SkillsModule } from './skills/skills.module';
import { ToolsModule } from './tools/tools.module';
import { PolicyModule } from './policy/policy.module';
import { ApprovalsModule } from './approvals/approvals.module';

@Global()
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule,
        HealthModule,
        MetricsModule,
        // SPEC §10: in multi-tenant mode /metrics is on API_METRICS_PORT only (MetricsPort).
        ...(apiTenancy(config) === 'single' ? [PublicMetricsModule] : []),
        QuotasModule,
        SessionsModule,
        RunsModule,
        EventsModule,
        ShellModule,
        NodesModule,
        ToolsModule,
        SkillsModule,
        McpModule,
        DocsModule,
        PolicyModule,
        ApprovalsModule,
        ConsoleModule,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: APP_GUARD, useClass: AuthGuard },
        // After AuthGuard: guards run in the order they are registered.
        { provide: APP_GUARD, useClass: TenantRateGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
      exports: [APP_CONFIG, LOGGER],
    };
  }
}
