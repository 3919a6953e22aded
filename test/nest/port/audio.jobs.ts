/** The jobs of the `audio` queue, by name (the NestJS docs' example uses `any`; typed here). */
export interface AudioJobs {
  transcode: { data: { file: string }; result: { file: string; steps: number } };
  concatenate: { data: { files: string[] }; result: { file: string } };
}
