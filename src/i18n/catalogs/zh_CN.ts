import type { Catalog } from './index.js';

const zh_CN: Catalog = {
};

export default zh_CN;
