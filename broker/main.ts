#!/usr/bin/env node
/**
 * Process entry point: `node dist/broker/main.js [--config FILE] [--key=value ...]`. Loads and validates the
 * configuration, starts the broker, and stops it gracefully on SIGTERM or SIGINT.
 */
import { ConfigError, formatHelp, loadConfig } from './config/config.js';
import { Broker } from './broker.js';
import { createLogger, type LogLevel } from './logger.js';

async function main(): Promise<number> {
  let loaded;
  try {
    loaded = loadConfig({ argv: process.argv.slice(2), env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`floe: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (loaded.help) {
    process.stdout.write(formatHelp() + '\n');
    return 0;
  }
  const config = loaded.config;
  const log = createLogger(config['log.level'] as LogLevel);
  const broker = await Broker.start(config, log);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info('stopping', { signal });
      broker.stop().then(resolve, (err: unknown) => {
        log.error('error while stopping', { err });
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`floe: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
