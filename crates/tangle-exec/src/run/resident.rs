//! Resident memory: a [`Resources`]' buffers and images converted into the executor's words
//! once ([`Resident::new`]), dispatched on any number of times
//! ([`crate::Pipeline::dispatch_resident`]) and read back on demand ([`Resident::resources`],
//! [`Resident::into_resources`]), as a Vulkan application keeps its buffers in device memory
//! between dispatches and maps them when it wants the results.
//!
//! The bytes of [`Resources`] stay beside the words as the fast paths' backup: a dispatch the
//! native tier or the wide interpreter gives up is restarted from its inputs
//! ([`Resident::restore`]), so they must be those inputs. They are until a dispatch may have
//! written a region; such a region is *stale* (its bytes are older than its words) until a
//! read-back, or until the next dispatch that may write it refreshes its bytes first
//! ([`Resident::refresh`]). Only regions the program may write ([`Writes`]) are refreshed,
//! restored and read back; the others' words and bytes stay equal.
//!
//! Views of shared allocations ([`Resources::views`], [`Resources::texel_views`]) are regions
//! too, on the allocation's words themselves: nothing is converted, read back or made stale
//! (the allocation is the truth), and their backup is a copy of the bytes of each writable
//! view taken before a dispatch that may restart ([`Resident::refresh`]). Regions that share
//! bytes get their [`View::alias`] here.

use super::access::BufferKey;
use super::image::ImageView;
use super::memory::{View, Words, FIRST_BUFFER};
use crate::device::Resources;
use crate::program::writes::Writes;

/// A dispatch's memory, kept in the executor's form across dispatches.
#[derive(Debug)]
pub struct Resident {
    /// The bytes: a region's inputs for the next dispatch where it is not stale.
    res: Resources,
    /// The regions: buffers in `res.buffers` order, the elements of descriptor arrays in
    /// `res.elements` order, the buffer views in `res.views` order, the null buffer
    /// descriptors in `res.null_buffers` order, then images, image
    /// elements and texel views (the order of [`crate::run::memory::FIRST_BUFFER`] `+ i`
    /// pointers and of device addresses).
    pub(crate) regions: Vec<(View, BufferKey)>,
    /// For each region, the image it holds, if any.
    pub(crate) images: Vec<Option<ImageView>>,
    /// Push constants.
    pub(crate) push: Words,
    /// Regions whose words a dispatch may have written since their bytes were last made equal.
    stale: Vec<bool>,
    /// For each region that is a view of a shared allocation, the copy of its bytes
    /// [`Resident::refresh`] took (`Some(None)`: none yet); `None` for the regions made from
    /// bytes of `res`.
    backups: Vec<Option<Option<Vec<u8>>>>,
}

/// The key of element `e` of a binding: element 0 is the binding's plain buffer or image.
fn key_of((set, binding, e): (u32, u32, u32)) -> BufferKey {
    (set, binding, (e > 0).then_some(e))
}

/// A view of `offset .. offset + range` of `memory`, cut to the allocation (a view past it
/// is refused before a dispatch, `super::admit`).
fn view_of(memory: &crate::allocation::Allocation, offset: u64, range: u64) -> View {
    let len = memory.len();
    let base = offset.min(len);
    View {
        words: memory.0.clone(),
        base,
        len: range.min(len - base),
        alias: None,
        null: false,
    }
}

/// Gives every region that shares bytes with another its [`View::alias`]: regions of one
/// allocation are taken in order of their first byte, and each run of overlapping ones logs
/// its bytes as offsets from the first of the run, the one with the lowest `base`.
fn find_aliases(regions: &mut [(View, BufferKey)]) {
    let mut order: Vec<usize> = (0..regions.len()).collect();
    order.sort_by_key(|&i| {
        let v = &regions[i].0;
        (std::sync::Arc::as_ptr(&v.words) as usize, v.base, i)
    });
    let mut run: Vec<usize> = Vec::new();
    // (allocation, end of the run so far)
    let mut current: Option<(usize, u64)> = None;
    let close = |run: &mut Vec<usize>, regions: &mut [(View, BufferKey)]| {
        if let [first, _, ..] = run[..] {
            let base = regions[first].0.base;
            for &i in run.iter() {
                let v = &mut regions[i].0;
                v.alias = Some((FIRST_BUFFER + first as u64, v.base - base));
            }
        }
        run.clear();
    };
    for i in order {
        let v = &regions[i].0;
        let at = std::sync::Arc::as_ptr(&v.words) as usize;
        let (start, end) = (v.base, v.base + v.len);
        match current {
            Some((a, e)) if a == at && start < e && v.len > 0 => {
                run.push(i);
                current = Some((a, e.max(end)));
            }
            _ => {
                close(&mut run, regions);
                run.push(i);
                current = Some((at, end));
            }
        }
    }
    close(&mut run, regions);
}

impl Resident {
    /// Converts `res`'s buffers, images and push constants into executor memory (on every
    /// core for large regions, [`Words::from_bytes`]); its views are bound as they are.
    pub fn new(res: Resources) -> Resident {
        let whole = |b: &Vec<u8>| View::whole(Words::from_bytes(b));
        let mut regions: Vec<(View, BufferKey)> = res
            .buffers
            .iter()
            .map(|(&(set, binding), v)| (whole(v), (set, binding, None)))
            .chain(
                res.elements
                    .iter()
                    .map(|(&(s, b, i), v)| (whole(v), (s, b, Some(i)))),
            )
            .collect();
        let owned = regions.len();
        for (&k, v) in &res.views {
            regions.push((view_of(&v.memory, v.offset, v.range), key_of(k)));
        }
        // Null descriptors: regions of no bytes, with nothing to convert, restore or read back.
        for &k in &res.null_buffers {
            regions.push((View::null(), key_of(k)));
        }
        let mut images: Vec<Option<ImageView>> = vec![None; regions.len()];
        let elements = res.image_elements.iter().map(|(&k, i)| (k, i));
        let mut backups: Vec<Option<Option<Vec<u8>>>> = (0..regions.len())
            .map(|i| (i >= owned).then_some(None))
            .collect();
        for ((set, binding, element), img) in res
            .images
            .iter()
            .map(|(&(s, b), i)| ((s, b, 0), i))
            .chain(elements)
        {
            regions.push((whole(&img.texels), key_of((set, binding, element))));
            images.push(Some(ImageView {
                set,
                binding,
                element,
                format: img.format,
                extent: img.extent,
                null: false,
            }));
            backups.push(None);
        }
        for (&(set, binding, element), t) in &res.texel_views {
            let size = u64::from(t.format.bytes()).max(1);
            let texels = t.view.range / size;
            let view = view_of(&t.view.memory, t.view.offset, texels * size);
            regions.push((view, key_of((set, binding, element))));
            images.push(Some(ImageView {
                set,
                binding,
                element,
                format: t.format,
                extent: [u32::try_from(texels).unwrap_or(u32::MAX), 1, 1],
                null: false,
            }));
            backups.push(Some(None));
        }
        // Null image descriptors: no texels, an extent of 0 and a format never decoded.
        for &(set, binding, element) in &res.null_images {
            regions.push((View::null(), key_of((set, binding, element))));
            images.push(Some(ImageView {
                set,
                binding,
                element,
                format: &crate::semantics::texel::FORMATS[0],
                extent: [0; 3],
                null: true,
            }));
            backups.push(Some(None));
        }
        find_aliases(&mut regions);
        let push = Words::from_bytes(&res.push_constants);
        let stale = vec![false; regions.len()];
        Resident {
            res,
            regions,
            images,
            push,
            stale,
            backups,
        }
    }

    /// Whether a region the dispatch may write shares bytes with another region
    /// ([`View::alias`]).
    pub(crate) fn aliased_writes(&self, writable: &[bool]) -> bool {
        !self.written_runs(writable).is_empty()
    }

    /// The runs of regions sharing bytes ([`View::alias`]'s first region) that some region
    /// the dispatch may write belongs to.
    fn written_runs(&self, writable: &[bool]) -> std::collections::BTreeSet<u64> {
        let mut written = std::collections::BTreeSet::new();
        for ((v, _), &w) in self.regions.iter().zip(writable) {
            if let (Some((r, _)), true) = (v.alias, w) {
                written.insert(r);
            }
        }
        written
    }

    /// The regions whose accesses the fast paths' race screens must log, from those the
    /// dispatch may write: those, and every region sharing bytes with one of them (its loads
    /// read bytes another binding may write).
    ///
    /// # Spec
    /// SPIR-V "Memory Model": "two memory accesses conflict if they access the same memory
    /// location and at least one of which is a write"; a location is the bytes, whichever
    /// descriptor reaches them.
    pub(crate) fn screened(&self, writable: &[bool]) -> Vec<bool> {
        let written = self.written_runs(writable);
        self.regions
            .iter()
            .zip(writable)
            .map(|((v, _), &w)| w || v.alias.is_some_and(|(r, _)| written.contains(&r)))
            .collect()
    }

    /// Whether every region starts on a word, as the native tier's region table needs
    /// ([`View::as_ptr`]).
    pub(crate) fn word_aligned(&self) -> bool {
        self.regions.iter().all(|(v, _)| v.base.is_multiple_of(4))
    }

    /// The resources with every region's current contents (read back where a dispatch may
    /// have written it since).
    pub fn resources(&mut self) -> &Resources {
        for i in 0..self.regions.len() {
            self.read_back(i);
        }
        &self.res
    }

    /// The resources with every region's current contents.
    pub fn into_resources(mut self) -> Resources {
        self.resources();
        self.res
    }

    /// The bytes as last read back, without what dispatches wrote since: the inputs of a
    /// failed [`crate::Pipeline::dispatch`], which leaves its resources as they were.
    pub(crate) fn into_backup(self) -> Resources {
        self.res
    }

    /// The bytes (the budget counts their sizes; the words are as large).
    pub(crate) fn bytes(&self) -> &Resources {
        &self.res
    }

    /// Which regions `writes` says the program may write.
    pub(crate) fn writable(&self, writes: &Writes) -> Vec<bool> {
        self.regions
            .iter()
            .zip(&self.images)
            .enumerate()
            .map(|(i, ((_, (s, b, _)), v))| writes.region(i, (*s, *b), v.is_some()))
            .collect()
    }

    /// Before a dispatch that may give up and restart: the bytes of every stale region it may
    /// write become its words, the dispatch's inputs; a view of a shared allocation it may
    /// write has its bytes copied (the view's size, never the allocation's).
    pub(crate) fn refresh(&mut self, writable: &[bool]) {
        for (i, &w) in writable.iter().enumerate() {
            if w {
                self.read_back(i);
                if let (Some(Some(b)), Some((v, _))) =
                    (self.backups.get_mut(i), self.regions.get(i))
                {
                    *b = Some(v.to_bytes());
                }
            }
        }
    }

    /// After a fast path gave up: every region the dispatch may have written goes back to its
    /// inputs (the bytes, which [`Resident::refresh`] made those), in place.
    pub(crate) fn restore(&self, writable: &[bool]) {
        let regions = self.regions.iter().zip(&self.images).zip(writable);
        for (i, (((view, key), image), &w)) in regions.enumerate() {
            if !w {
                continue;
            }
            match self.backups.get(i) {
                Some(Some(Some(b))) => view.words.write_at(view.base, b),
                Some(Some(None)) => {}
                _ => {
                    if let Some(bytes) = self.bytes_of(key, image.is_some()) {
                        view.words.load_from(bytes);
                    }
                }
            }
        }
    }

    /// After a dispatch (finished or not): the regions it may have written are stale.
    pub(crate) fn written(&mut self, writable: &[bool]) {
        for (s, &w) in self.stale.iter_mut().zip(writable) {
            *s |= w;
        }
    }

    /// The bytes region `key` was made from.
    fn bytes_of(&self, &(set, binding, element): &BufferKey, image: bool) -> Option<&Vec<u8>> {
        match (element, image) {
            (None, true) => self.res.images.get(&(set, binding)).map(|i| &i.texels),
            (Some(e), true) => self
                .res
                .image_elements
                .get(&(set, binding, e))
                .map(|i| &i.texels),
            (None, false) => self.res.buffers.get(&(set, binding)),
            (Some(i), false) => self.res.elements.get(&(set, binding, i)),
        }
    }

    /// Writes region `i`'s words over its bytes, in place, if it is stale (a view of a shared
    /// allocation has no bytes of its own).
    fn read_back(&mut self, i: usize) {
        let shared = matches!(self.backups.get(i), Some(Some(_)));
        if shared || !self.stale.get(i).copied().unwrap_or(false) {
            return;
        }
        let Some(((view, (set, binding, element)), image)) =
            self.regions.get(i).zip(self.images.get(i))
        else {
            return;
        };
        let res = &mut self.res;
        let bytes = match (element, image.is_some()) {
            (None, true) => res.images.get_mut(&(*set, *binding)).map(|i| &mut i.texels),
            (Some(e), true) => res
                .image_elements
                .get_mut(&(*set, *binding, *e))
                .map(|i| &mut i.texels),
            (None, false) => res.buffers.get_mut(&(*set, *binding)),
            (Some(e), false) => res.elements.get_mut(&(*set, *binding, *e)),
        };
        // The bytes are those the words were made from: the lengths agree.
        if let Some(b) = bytes {
            view.words.write_into(b);
        }
        if let Some(s) = self.stale.get_mut(i) {
            *s = false;
        }
    }
}
