/** Secrets that must never reach an error message or a log line. */
export class Redactor {
  private readonly secrets: string[];

  constructor(secrets: Array<string | undefined | null>) {
    this.secrets = secrets.filter((s): s is string => typeof s === 'string' && s.length > 0);
  }

  /** Masks known secrets and any password inside a redis:// or rediss:// URL. */
  text(input: string): string {
    let out = input.replace(/(rediss?:\/\/)([^@\s/]*)@/gi, (_m, scheme: string, auth: string) => {
      const user = auth.includes(':') ? auth.slice(0, auth.indexOf(':')) : '';
      return `${scheme}${user ? `${user}:` : ''}***@`;
    });
    for (const s of this.secrets) out = out.split(s).join('***');
    return out;
  }
}
