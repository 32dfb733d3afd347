// A made-up operator's configuration, with two settings of its own, for the kit's tests.
import { defineOperatorConfig } from '../config/operator-config.ts';
import { text, wholeNumber } from '../config/setting-parsers.ts';

export const widgetConfig = defineOperatorConfig('widget-operator', {
  widgetImage: {
    flag: 'widget-image',
    env: 'WIDGET_IMAGE',
    placeholder: 'ref',
    help: 'image of Widgets that name none',
    default: 'example.test/widget:1',
    parse: text,
  },
  retainedBackups: {
    flag: 'retained-backups',
    env: 'RETAINED_BACKUPS',
    placeholder: 'n',
    help: 'backups kept per Widget',
    default: '3',
    parse: wholeNumber(1),
  },
});
