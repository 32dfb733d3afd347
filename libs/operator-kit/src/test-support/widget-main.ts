// A whole operator process as main.ts files write it, with no controllers: what the entry-point
// test starts. WIDGET_BUILD_FAILS makes building the manager fail with a ConfigError;
// WIDGET_HOLDS_HANDLE keeps a timer running, as an operand client's open channel would.
import { ConfigError, operatorManager, runOperator } from '../index.ts';
import { widgetConfig } from './widget-config.ts';

await runOperator({
  name: 'widget-operator',
  readConfig: widgetConfig.read,
  build: (kubeConfig, settings, extras) => {
    if (process.env['WIDGET_BUILD_FAILS'])
      throw new ConfigError('the widget schedule is not a cron expression');
    if (process.env['WIDGET_HOLDS_HANDLE']) setInterval(() => undefined, 1000);
    return operatorManager(kubeConfig, 'widget-operator', settings, extras);
  },
  describe: (settings) => ({ widgetImage: settings.widgetImage }),
});
