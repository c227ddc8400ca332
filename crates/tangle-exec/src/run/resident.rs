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

use super::access::BufferKey;
use super::image::ImageView;
use super::memory::Words;
use crate::device::Resources;
use crate::program::writes::Writes;

/// A dispatch's memory, kept in the executor's form across dispatches.
#[derive(Debug)]
pub struct Resident {
    /// The bytes: a region's inputs for the next dispatch where it is not stale.
    res: Resources,
    /// The regions: buffers in `res.buffers` order, the elements of descriptor arrays in
    /// `res.elements` order, then images and image elements (the order of
    /// [`crate::run::memory::FIRST_BUFFER`] `+ i` pointers and of device addresses).
    pub(crate) regions: Vec<(Words, BufferKey)>,
    /// For each region, the image it holds, if any.
    pub(crate) images: Vec<Option<ImageView>>,
    /// Push constants.
    pub(crate) push: Words,
    /// Regions whose words a dispatch may have written since their bytes were last made equal.
    stale: Vec<bool>,
}

impl Resident {
    /// Converts `res`'s buffers, images and push constants into executor memory (on every
    /// core for large regions, [`Words::from_bytes`]).
    pub fn new(res: Resources) -> Resident {
        let mut regions: Vec<(Words, BufferKey)> = res
            .buffers
            .iter()
            .map(|(&(set, binding), v)| (Words::from_bytes(v), (set, binding, None)))
            .chain(
                res.elements
                    .iter()
                    .map(|(&(s, b, i), v)| (Words::from_bytes(v), (s, b, Some(i)))),
            )
            .collect();
        let mut images: Vec<Option<ImageView>> = vec![None; regions.len()];
        let elements = res.image_elements.iter().map(|(&k, i)| (k, i));
        for ((set, binding, element), img) in res
            .images
            .iter()
            .map(|(&(s, b), i)| ((s, b, 0), i))
            .chain(elements)
        {
            regions.push((
                Words::from_bytes(&img.texels),
                (set, binding, (element > 0).then_some(element)),
            ));
            images.push(Some(ImageView {
                set,
                binding,
                element,
                format: img.format,
                extent: img.extent,
            }));
        }
        let push = Words::from_bytes(&res.push_constants);
        let stale = vec![false; regions.len()];
        Resident {
            res,
            regions,
            images,
            push,
            stale,
        }
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
    /// write become its words, the dispatch's inputs.
    pub(crate) fn refresh(&mut self, writable: &[bool]) {
        for (i, &w) in writable.iter().enumerate() {
            if w {
                self.read_back(i);
            }
        }
    }

    /// After a fast path gave up: every region the dispatch may have written goes back to its
    /// inputs (the bytes, which [`Resident::refresh`] made those), in place.
    pub(crate) fn restore(&self, writable: &[bool]) {
        let regions = self.regions.iter().zip(&self.images).zip(writable);
        for (((words, key), image), &w) in regions {
            if let (true, Some(bytes)) = (w, self.bytes_of(key, image.is_some())) {
                words.load_from(bytes);
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

    /// Writes region `i`'s words over its bytes, in place, if it is stale.
    fn read_back(&mut self, i: usize) {
        if !self.stale.get(i).copied().unwrap_or(false) {
            return;
        }
        let Some(((words, (set, binding, element)), image)) =
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
            words.write_into(b);
        }
        if let Some(s) = self.stale.get_mut(i) {
            *s = false;
        }
    }
}
