import { z } from 'zod';

// Placeholder until the daemon issue lands its schema here.
export const scheduleSchema = z.string().default('*/30 * * * *').describe('Daemon mode: cron expression of the runs.');
export const timezoneSchema = z.string().default('UTC').describe('Time zone of the schedule.');
export const metricsConfigSchema = z
  .looseObject({ listen: z.string().default('0.0.0.0:9464'), pushgateway_url: z.string().default('') })
  .default({ listen: '0.0.0.0:9464', pushgateway_url: '' });
export const logConfigSchema = z.looseObject({ level: z.string().default('info') }).default({ level: 'info' });
