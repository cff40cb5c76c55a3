import { Controller, Get, Header, Inject } from '@nestjs/common';
import type { AppConfig } from '@codemode/config';
import { APP_CONFIG } from '../core/tokens';
import { renderDocsPage } from './docs-page';
import { buildOpenApiDocument } from './openapi-document';

/** `GET /openapi.json` and `GET /docs` at the root, open like the other operational routes (authentication guards `/v1`). */
@Controller()
export class DocsController {
  /** Rendered once at start-up: the document depends only on the contracts and the version. */
  private readonly json: string;
  private readonly html: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const document = buildOpenApiDocument(config.version);
    this.json = JSON.stringify(document);
    this.html = renderDocsPage(document);
  }

  @Get('openapi.json')
  @Header('content-type', 'application/json; charset=utf-8')
  document(): string {
    return this.json;
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  page(): string {
    return this.html;
  }
}
