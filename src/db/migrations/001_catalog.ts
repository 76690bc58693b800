import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('regions', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('currency_code').notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.integer('rank').notNullable();
    // Tax is added on top of catalogue prices at this rate (basis points); shipping is not taxed.
    t.integer('tax_rate_bps').notNullable();
    t.integer('shipping_amount').notNullable(); // minor units
    t.integer('free_shipping_threshold'); // minor units of goods after discount; null: never free
  });
  await db.raw('CREATE UNIQUE INDEX regions_one_default ON regions (is_default) WHERE is_default');

  await db.schema.createTable('region_countries', (t) => {
    t.text('region_id').notNullable().references('regions.id');
    t.text('iso_2').notNullable();
    t.text('display_name').notNullable();
    t.primary(['region_id', 'iso_2']);
  });

  await db.schema.createTable('collections', (t) => {
    t.text('id').primary();
    t.text('title').notNullable();
    t.text('handle').notNullable().unique();
  });

  await db.schema.createTable('categories', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('handle').notNullable().unique();
    t.text('description');
    t.text('parent_id').references('categories.id');
  });

  await db.schema.createTable('products', (t) => {
    t.text('id').primary();
    t.text('title').notNullable();
    t.text('handle').notNullable().unique();
    t.text('description');
    t.text('material');
    t.text('thumbnail');
    t.text('collection_id').references('collections.id');
    t.integer('rank').notNullable();
  });

  await db.schema.createTable('product_categories', (t) => {
    t.text('product_id').notNullable().references('products.id');
    t.text('category_id').notNullable().references('categories.id');
    t.primary(['product_id', 'category_id']);
  });

  await db.schema.createTable('variants', (t) => {
    t.text('id').primary();
    t.text('product_id').notNullable().references('products.id');
    t.text('title').notNullable();
    t.text('sku').unique();
    t.boolean('manage_inventory').notNullable();
    t.boolean('allow_backorder').notNullable();
    t.integer('inventory_quantity').notNullable().defaultTo(0);
    t.integer('rank').notNullable();
    t.index(['product_id']);
  });

  await db.schema.createTable('variant_prices', (t) => {
    t.text('variant_id').notNullable().references('variants.id');
    t.text('region_id').notNullable().references('regions.id');
    t.integer('amount').notNullable().checkPositive(); // minor units of the region's currency, tax excluded
    t.primary(['variant_id', 'region_id']);
  });

  await db.schema.createTable('reviews', (t) => {
    t.text('id').primary();
    t.text('product_id').notNullable().references('products.id');
    t.text('author').notNullable();
    t.text('title').notNullable();
    t.text('quote').notNullable();
    t.smallint('rating').notNullable().checkBetween([1, 5]);
    t.date('review_date').notNullable();
    t.boolean('verified').notNullable();
    t.index(['product_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'reviews',
    'variant_prices',
    'variants',
    'product_categories',
    'products',
    'categories',
    'collections',
    'region_countries',
    'regions',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
}
