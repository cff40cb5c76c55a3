import { Controller, Get, Param, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { loadConsoleAssets, type ConsoleAsset } from './console-assets';

/**
 * The page may only talk to this origin and load its own files: it holds an API key in session
 * storage, so no third-party script, frame or form target is allowed near it.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

const NOT_BUILT = 'The operator console was not built: run `npm run build`, then restart the API.\n';

/** `GET /console` and its files, open like `/docs`: the page asks for an API key itself. */
@Controller('console')
export class ConsoleController {
  private readonly assets = loadConsoleAssets();

  @Get()
  page(@Res() res: ServerResponse): void {
    this.send(res, this.assets?.get('index.html'));
  }

  @Get(':file')
  file(@Param('file') file: string, @Res() res: ServerResponse): void {
    // index.html only under /console itself, so there is one address of the page.
    this.send(res, file === 'index.html' ? undefined : this.assets?.get(file));
  }

  private send(res: ServerResponse, asset: ConsoleAsset | undefined): void {
    if (this.assets === null) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end(NOT_BUILT);
      return;
    }
    if (!asset) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end('Not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': asset.contentType, ...SECURITY_HEADERS }).end(asset.body);
  }
}
