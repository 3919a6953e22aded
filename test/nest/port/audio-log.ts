import { Injectable } from '@nestjs/common';

/** Where the example's `console.log` lines go, so that the spec can read them. */
@Injectable()
export class AudioLog {
  readonly lines: string[] = [];

  log(line: string): void {
    this.lines.push(line);
  }
}
