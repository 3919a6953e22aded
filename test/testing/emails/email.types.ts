export interface EmailJob {
  to: string;
  subject: string;
}

export interface EmailReceipt {
  to: string;
  body: string;
  attempt: number;
}
