import type { Catalog } from './index.js';

const lv_LV: Catalog = {
};

export default lv_LV;
