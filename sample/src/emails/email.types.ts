/** What POST /emails enqueues. */
export interface EmailJob {
  to: string;
  subject: string;
  body: string;
}

/** What the processor stores as the job's result. */
export interface EmailReceipt {
  messageId: string;
  sentAt: string;
}
