//! What survives a reload: the last trace the user loaded from files (its `File` objects, up to
//! [`MAX_STORED_BYTES`]) and the analysis settings, kept in the browser's IndexedDB through
//! `rexie`. Nothing is sent anywhere; "Forget stored traces" deletes it all.
//!
//! The files are stored as `Blob`s: IndexedDB copies their content into the browser's own
//! storage, so the page never reads them into memory to store them, and on reload the worker
//! reads them back in slices like any picked file.

use js_sys::{Array, Object, Reflect};
use rexie::{ObjectStore, Rexie, TransactionMode};
use wasm_bindgen::JsValue;

/// Most input bytes stored for a reload (512 MiB): browsers grant a site a share of the disk,
/// often a few GB, and a trace bigger than this is better picked again than duplicated.
pub const MAX_STORED_BYTES: u64 = 512 << 20;

const DATABASE: &str = "tracelogic";
const STORE: &str = "state";
/// Key of the stored trace.
const TRACE: &str = "trace";
/// Key of the stored settings (a [`crate::route::Route`] fragment).
const SETTINGS: &str = "settings";

/// A trace kept for the next visit.
#[derive(Debug, Clone)]
pub struct StoredTrace {
    /// What the user loaded.
    pub label: String,
    /// Relative names, in the order of `files`.
    pub names: Vec<String>,
    /// The `Blob`s.
    pub files: Array,
    /// Their total size.
    pub bytes: u64,
}

fn err(what: &str, e: impl std::fmt::Display) -> String {
    format!("browser storage: cannot {what}: {e}")
}

async fn open() -> Result<Rexie, String> {
    Rexie::builder(DATABASE)
        .version(1)
        .add_object_store(ObjectStore::new(STORE))
        .build()
        .await
        .map_err(|e| err("open the database", e))
}

async fn put(key: &str, value: &JsValue) -> Result<(), String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(|e| err("write", e))?;
    let store = tx.store(STORE).map_err(|e| err("write", e))?;
    store
        .put(value, Some(&JsValue::from_str(key)))
        .await
        .map_err(|e| err("write", e))?;
    tx.done().await.map_err(|e| err("write", e))?;
    db.close();
    Ok(())
}

async fn get(key: &str) -> Result<Option<JsValue>, String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadOnly)
        .map_err(|e| err("read", e))?;
    let store = tx.store(STORE).map_err(|e| err("read", e))?;
    let value = store.get(JsValue::from_str(key)).await.map_err(|e| err("read", e))?;
    tx.done().await.map_err(|e| err("read", e))?;
    db.close();
    Ok(value.filter(|v| !v.is_undefined() && !v.is_null()))
}

/// Keep `files` (`File` or `Blob` objects named by `names`) as the trace to reopen. Returns
/// false, storing nothing and dropping any older trace, when they exceed [`MAX_STORED_BYTES`].
pub async fn save_trace(label: &str, names: &[String], files: &Array, bytes: u64) -> Result<bool, String> {
    if bytes > MAX_STORED_BYTES {
        forget_trace().await?;
        return Ok(false);
    }
    let record = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&record, &JsValue::from_str(k), v).map(|_| ());
    let names_js: Array = names.iter().map(|n| JsValue::from_str(n)).collect();
    set("label", &JsValue::from_str(label))
        .and_then(|_| set("names", &names_js))
        .and_then(|_| set("files", files))
        .and_then(|_| set("bytes", &JsValue::from_f64(bytes as f64)))
        .map_err(|_| err("write", "record"))?;
    put(TRACE, &record).await?;
    Ok(true)
}

/// The stored trace, if any (a record that does not read back is treated as none).
pub async fn load_trace() -> Result<Option<StoredTrace>, String> {
    let Some(record) = get(TRACE).await? else {
        return Ok(None);
    };
    let field = |k: &str| Reflect::get(&record, &JsValue::from_str(k)).ok();
    let label = field("label").and_then(|v| v.as_string());
    let names = field("names").filter(|v| v.is_array()).map(|v| Array::from(&v));
    let files = field("files").filter(|v| v.is_array()).map(|v| Array::from(&v));
    let bytes = field("bytes").and_then(|v| v.as_f64());
    match (label, names, files, bytes) {
        (Some(label), Some(names), Some(files), Some(bytes)) if names.length() == files.length() => {
            Ok(Some(StoredTrace {
                label,
                names: names.iter().filter_map(|n| n.as_string()).collect(),
                files,
                bytes: bytes as u64,
            }))
        }
        _ => Ok(None),
    }
}

/// Drop the stored trace only.
pub async fn forget_trace() -> Result<(), String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(|e| err("delete", e))?;
    let store = tx.store(STORE).map_err(|e| err("delete", e))?;
    store
        .delete(JsValue::from_str(TRACE))
        .await
        .map_err(|e| err("delete", e))?;
    tx.done().await.map_err(|e| err("delete", e))?;
    db.close();
    Ok(())
}

/// Drop everything stored: the trace and the settings.
pub async fn forget_all() -> Result<(), String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(|e| err("delete", e))?;
    let store = tx.store(STORE).map_err(|e| err("delete", e))?;
    store.clear().await.map_err(|e| err("delete", e))?;
    tx.done().await.map_err(|e| err("delete", e))?;
    db.close();
    Ok(())
}

/// Keep the analysis settings (a route fragment without the sample).
pub async fn save_settings(fragment: &str) -> Result<(), String> {
    put(SETTINGS, &JsValue::from_str(fragment)).await
}

/// The stored settings fragment, if any.
pub async fn load_settings() -> Result<Option<String>, String> {
    Ok(get(SETTINGS).await?.and_then(|v| v.as_string()))
}

/// Keep any other value of the page's state under `key` (e.g. a reference library), as a
/// JSON text; [`forget_all`] removes it too.
pub async fn save_value(key: &str, json: &str) -> Result<(), String> {
    put(key, &JsValue::from_str(json)).await
}

/// A value kept with [`save_value`].
pub async fn load_value(key: &str) -> Result<Option<String>, String> {
    Ok(get(key).await?.and_then(|v| v.as_string()))
}
