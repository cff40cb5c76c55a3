import { Controller, HttpCode, Post } from '@nestjs/common';
import type { SessionRef, ShellAnswer } from '@codemode/contracts';
import type { KeyRole } from '@codemode/config';
import { JsonBody, requireObjectBody, Role, Session } from '../http/request-params';
import type { ParsedBody } from '../http/request-context';
import { ShellService } from './shell.service';

@Controller('v1/sessions/:sid')
export class ShellController {
  constructor(private readonly shell: ShellService) {}

  @Post('shell/exec')
  @HttpCode(200)
  exec(@Session() ref: SessionRef, @Role() role: KeyRole, @JsonBody() body: ParsedBody): Promise<ShellAnswer> {
    return this.shell.exec(ref, role, requireObjectBody(body));
  }

  @Post('process')
  @HttpCode(200)
  process(@Session() ref: SessionRef, @Role() role: KeyRole, @JsonBody() body: ParsedBody): Promise<ShellAnswer> {
    return this.shell.process(ref, role, requireObjectBody(body));
  }
}
