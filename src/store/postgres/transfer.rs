//! PostgreSQL's side of moving an archive between databases (`store::transfer`): tables read
//! and written as rows of SQLite values, each converted to and from the column's type.

use super::PgStore;
use crate::store::transfer::Rows;
use anyhow::{Context, Result};
use postgres::types::{ToSql, Type};
use rusqlite::types::Value;

/// `v` as a parameter of type `ty` (the schema's four: `BIGINT`, `DOUBLE PRECISION`, `TEXT`,
/// `BYTEA`).
fn param(v: &Value, ty: &Type) -> Result<Box<dyn ToSql + Sync + Send>> {
    Ok(match (v, ty) {
        (Value::Null, &Type::INT8) => Box::new(None::<i64>),
        (Value::Null, &Type::FLOAT8) => Box::new(None::<f64>),
        (Value::Null, &Type::BYTEA) => Box::new(None::<Vec<u8>>),
        (Value::Null, _) => Box::new(None::<String>),
        (Value::Integer(i), &Type::INT8) => Box::new(*i),
        (Value::Integer(i), &Type::FLOAT8) => Box::new(*i as f64),
        (Value::Real(f), &Type::FLOAT8) => Box::new(*f),
        (Value::Text(s), &Type::BYTEA) => Box::new(s.as_bytes().to_vec()),
        (Value::Text(s), _) => Box::new(s.clone()),
        (Value::Blob(b), &Type::BYTEA) => Box::new(b.clone()),
        (Value::Blob(b), &Type::TEXT) => Box::new(
            String::from_utf8(b.clone()).context("bytes that are not UTF-8 for a text column")?,
        ),
        (v, ty) => anyhow::bail!("a value {v:?} for a column of type {ty}"),
    })
}

/// Column `i` of `row` as an SQLite value.
fn value(row: &postgres::Row, i: usize) -> Result<Value> {
    let ty = row.columns()[i].type_();
    Ok(match *ty {
        Type::INT8 => row
            .get::<_, Option<i64>>(i)
            .map_or(Value::Null, Value::Integer),
        Type::INT4 => row
            .get::<_, Option<i32>>(i)
            .map_or(Value::Null, |n| Value::Integer(n.into())),
        Type::FLOAT8 => row
            .get::<_, Option<f64>>(i)
            .map_or(Value::Null, Value::Real),
        Type::BYTEA => row
            .get::<_, Option<Vec<u8>>>(i)
            .map_or(Value::Null, Value::Blob),
        Type::TEXT | Type::VARCHAR | Type::NAME => row
            .get::<_, Option<String>>(i)
            .map_or(Value::Null, Value::Text),
        ref other => anyhow::bail!("column {} has type {other}", row.columns()[i].name()),
    })
}

/// Binds `values` to `st`'s parameters by their types.
fn params(st: &postgres::Statement, values: &[Value]) -> Result<Vec<Box<dyn ToSql + Sync + Send>>> {
    values
        .iter()
        .zip(st.params())
        .enumerate()
        .map(|(i, (v, ty))| param(v, ty).with_context(|| format!("parameter {}", i + 1)))
        .collect()
}

fn refs(p: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    p.iter()
        .map(|b| b.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

impl PgStore {
    /// The columns of `table` in the current schema.
    pub(crate) fn transfer_columns(&self, table: &str) -> Result<Vec<String>> {
        let table = table.to_string();
        self.call(move |c| {
            Ok(c.query(
                "SELECT column_name::TEXT FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = $1",
                &[&table],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })
    }

    /// The one `BIGINT` value `sql` selects (`None`: NULL).
    pub(crate) fn transfer_scalar(&self, sql: String) -> Result<Option<i64>> {
        self.call(move |c| Ok(c.query_one(&sql, &[])?.get(0)))
    }

    /// The rows `sql` selects with `after` bound to its parameters, each split after its first
    /// `cursor` values.
    pub(crate) fn transfer_read(
        &self,
        sql: String,
        after: Vec<Value>,
        cursor: usize,
    ) -> Result<Rows> {
        self.call(move |c| {
            let st = c.prepare(&sql)?;
            let p = params(&st, &after)?;
            let mut out = Vec::new();
            for row in c.query(&st, &refs(&p))? {
                let mut values = (0..row.len())
                    .map(|i| value(&row, i))
                    .collect::<Result<Vec<_>>>()?;
                let rest = values.split_off(cursor);
                out.push((values, rest));
            }
            Ok(out)
        })
    }

    /// Runs the insert `sql` once per row of `rows`, all in one transaction; returns how many
    /// rows were new.
    pub(crate) fn transfer_insert(&self, sql: String, rows: Vec<Vec<Value>>) -> Result<u64> {
        let rows = std::sync::Arc::new(rows);
        self.write(move |tx| {
            let st = tx.prepare(&sql)?;
            let mut new = 0;
            for row in rows.iter() {
                let p = params(&st, row)?;
                new += tx.execute(&st, &refs(&p))?;
            }
            Ok(new)
        })
    }

    /// Makes `table`'s id identity continue after its largest id (rows were copied with theirs).
    pub(crate) fn transfer_sequence_past_ids(&self, table: &str) -> Result<()> {
        let table = table.to_string();
        self.call(move |c| {
            c.execute(
                &format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id)) FROM {table} HAVING count(*) > 0"
                ),
                &[],
            )?;
            Ok(())
        })
    }
}
